/* cmd-region.h — `gpupool region ls|show|set`: the limits of the tasks on
 * each device and what they use, read from and written to the devices'
 * shared regions (shim/region.h). Takes argc/argv starting at "region"
 * and returns the exit status of cli/commands.h. */
#ifndef GP_CLI_CMD_REGION_H
#define GP_CLI_CMD_REGION_H

int gp_cmd_region(int argc, char **argv);

#endif
