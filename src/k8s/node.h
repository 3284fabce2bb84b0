/* node.h — `gpupool node --kubernetes`: the program a DaemonSet runs on
 * every accelerator node of a Kubernetes cluster (node-impl.h says what
 * it does; docs/kubernetes.md how it is deployed). */
#ifndef GP_K8S_NODE_H
#define GP_K8S_NODE_H

/* argc/argv start at "node"; returns an exit status of cli/commands.h. */
int gp_cmd_node_kubernetes(int argc, char **argv);

#endif
