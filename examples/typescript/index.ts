// A GPU pool and an inference service on a cluster this program already has (see docs/component-package.md).
// The keys are the stack file's (docs/configuration.md); a bad one fails `pulumi preview` with its one-line error.
import * as pulumi from "@pulumi/pulumi";
// The SDK `pulumi package add` generates: the package's namespace is `gpu-platform` (docs/component-package.md).
import * as gpu from "@gpu-platform/gpu-platform";
import * as k8s from "@pulumi/kubernetes";

const config = new pulumi.Config();
const kubeconfig = config.requireSecret("kubeconfig");
const provider = new k8s.Provider("cluster", { kubeconfig });
// Karpenter as this program already installs it: the pool's objects are created after this release.
const karpenter = k8s.helm.v3.Release.get("karpenter", "karpenter/karpenter", { provider });
const cluster = { name: "gpu-dev", kubernetesVersion: "1.35" };

const pool = new gpu.KarpenterGpuPool("gpu-dev-gpu-spot", {
    cluster,
    karpenterVersion: "1.14.1",
    pool: {
        name: "gpu-spot", os: "bottlerocket", driverVersion: "580", imageVersion: "v1.68.0",
        instanceTypes: ["g6.xlarge", "g5.xlarge"], capacityTypes: ["spot"], maxGpus: 4,
    },
    access: {
        endpoint: config.require("endpoint"),
        certificateAuthorityData: config.require("certificateAuthorityData"),
        serviceIpv4Cidr: "172.20.0.0/16",
        privateSubnetIds: config.requireObject<string[]>("privateSubnetIds"),
        clusterSecurityGroupId: config.require("clusterSecurityGroupId"),
    },
    instanceProfileName: config.require("instanceProfileName"),
    kubeconfig,
    karpenterRelease: karpenter,
});

const service = new gpu.InferenceService("triton-dev", {
    cluster,
    karpenterVersion: "1.14.1",
    pools: [{
        name: "gpu-spot", os: "bottlerocket", driverVersion: "580", imageVersion: "v1.68.0",
        instanceTypes: ["g6.xlarge", "g5.xlarge"], capacityTypes: ["spot"], maxGpus: 4,
    }],
    service: {
        name: "triton-dev", image: "nvcr.io/nvidia/tritonserver:25.10-py3", gpusPerReplica: 1,
        nodePools: ["gpu-spot"], minReplicas: 1, maxReplicas: 2,
    },
    zones: ["us-west-2a", "us-west-2b"],
    prometheusUrl: "http://monitoring-kube-prometheus-prometheus.monitoring.svc:9090",
    kubeconfig,
}, { dependsOn: [pool] });

export const nodePools = pool.nodePoolNames;
export const endpoint = service.endpoint;
