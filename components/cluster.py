"""Cluster: the VPC, the EKS control plane, its access entries, the system node group and a Kubernetes provider.

Why `pulumi_aws.eks.Cluster` and not pulumi-eks's `eks.Cluster`: pulumi-eks's Cluster is a remote
(multi-language) component; its children (the `aws:eks/cluster:Cluster`, security groups, IAM roles)
are registered by the Node.js provider plugin, not by this program. Under the offline recording
mocks that plugin does not run, so the preview, the policy pack and the unit tests would see one
opaque `eks:index:Cluster` instead of the control plane's encryption, logging and endpoint settings,
and every output downstream code reads (`eksCluster`, `core`, `kubeconfig`) would have to be
fabricated by the mocks. Building the same pieces from `pulumi_aws` keeps every security-relevant
input visible to CrossGuard and the tests, and is what a real `pulumi up` creates.
"""

from __future__ import annotations

import ipaddress
import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components import iam
from components.config import ClusterConfig, ConfigError, SystemNodeGroupConfig, stack_file_name
from components.system_node_group import SystemNodeGroup

# All five control-plane log types. Source: https://docs.aws.amazon.com/eks/latest/userguide/control-plane-logs.html
CONTROL_PLANE_LOG_TYPES: tuple[str, ...] = ("api", "audit", "authenticator", "controllerManager", "scheduler")
# EKS writes control-plane logs to this group; creating it first sets a retention instead of "never expire".
# Source: https://docs.aws.amazon.com/eks/latest/userguide/control-plane-logs.html
LOG_RETENTION_DAYS = 365

# Subnet tags the AWS Load Balancer Controller and Karpenter discover subnets by.
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/subnet_discovery/
# Source: https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/ (karpenter.sh/discovery)
PUBLIC_SUBNET_ROLE_TAG = "kubernetes.io/role/elb"
PRIVATE_SUBNET_ROLE_TAG = "kubernetes.io/role/internal-elb"
KARPENTER_DISCOVERY_TAG = "karpenter.sh/discovery"

# The VPC is cut into 16 equal subnets: private subnets take the first ones, public ones start at the 9th.
_SUBNET_SPLIT_BITS = 4
_PUBLIC_OFFSET = 8


def subnet_cidrs(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """(private, public) subnet CIDRs, one of each per zone, carved from the VPC CIDR."""
    blocks = list(ipaddress.IPv4Network(vpc_cidr).subnets(prefixlen_diff=_SUBNET_SPLIT_BITS))
    private = [str(blocks[i]) for i in range(zones)]
    public = [str(blocks[_PUBLIC_OFFSET + i]) for i in range(zones)]
    return private, public


def kubeconfig_json(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig that authenticates with `aws eks get-token` (the caller's AWS credentials).

    Source: https://docs.aws.amazon.com/eks/latest/userguide/create-kubeconfig.html
    """
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": cluster_name,
                          "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
            "current-context": cluster_name,
            "users": [
                {
                    "name": cluster_name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region,
                                     "--output", "json"],
                        }
                    },
                }
            ],
        },
        sort_keys=True,
    )


class Cluster(pulumi.ComponentResource):
    """An EKS cluster for GPU inference, or an adopted existing one, plus its system node group.

    New cluster (`existing: false`): a VPC with a public and a private subnet per zone (IGW, NAT
    gateways, route tables; subnets tagged for the load balancer controller and Karpenter discovery),
    an EKS control plane with API authentication mode (access entries, no aws-auth ConfigMap), no
    default node group, all five control-plane log types, envelope encryption of Secrets with a
    rotating customer-managed KMS key, the private endpoint on and the public endpoint limited to
    `endpointPublicAccessCidrs` (off when the list is empty), and the EKS Pod Identity agent add-on.
    Existing cluster (`existing: true`): the cluster is looked up by name; no VPC, control plane or
    add-on is created (the cluster owns those), node groups go into the cluster's subnets.
    Either way: a node IAM role, the system node group, access entries (cluster admins; the read-only
    operations principal with AmazonEKSViewPolicy on the whole cluster) and a Kubernetes provider.

    Requires: AWS credentials for the target account and region; `aws` CLI on the machine running
    Pulumi (the kubeconfig authenticates with `aws eks get-token`).
    Conflicts: `existing: true` with a cluster whose version differs from `kubernetesVersion`.
    Sources:
    - Cluster creation and access config: https://docs.aws.amazon.com/eks/latest/userguide/create-cluster.html
    - Access entries and policies: https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html
    - Secrets envelope encryption: https://docs.aws.amazon.com/eks/latest/userguide/envelope-encryption.html
    - Endpoint access: https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html
    - Pod Identity agent add-on: https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html
    - EKS MCP server read-only mode: https://awslabs.github.io/mcp/servers/eks-mcp-server/
    """

    cluster_name: pulumi.Output[str]
    kubernetes_version: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    certificate_authority_data: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    public_subnet_ids: pulumi.Output[list[str]]
    node_role_arn: pulumi.Output[str]
    node_role_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    system_node_group: SystemNodeGroup
    workload_dependencies: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        config: ClusterConfig,
        system_node_group: SystemNodeGroupConfig,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:components:Cluster", name, None, opts)
        self._name = name
        self._config = config
        region = aws.get_region().region

        node_role, node_attachments = iam.node_role(name, self)
        self.node_role_arn = node_role.arn
        self.node_role_name = node_role.name

        cluster_resource: pulumi.Resource | None
        if config.existing:
            cluster_resource = None
            self._adopt(config)
        else:
            cluster_resource = self._create(config)

        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster_name, self.endpoint, self.certificate_authority_data).apply(
                lambda args: kubeconfig_json(args[0], args[1], args[2], region)
            )
        )

        access = self._access_entries(config)
        self.system_node_group = SystemNodeGroup(
            f"{name}-system",
            system_node_group,
            cluster_name=self.cluster_name,
            kubernetes_version=self.kubernetes_version,
            node_role_arn=self.node_role_arn,
            subnet_ids=self.private_subnet_ids,
            depends_on=[*node_attachments, *([cluster_resource] if cluster_resource else [])],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.workload_dependencies = [self.system_node_group, *access]
        if not config.existing:
            # DaemonSet add-ons only become ACTIVE once nodes exist, so the add-on waits for the system nodes.
            pod_identity = aws.eks.Addon(
                f"{name}-pod-identity-agent",
                cluster_name=self.cluster_name,
                addon_name="eks-pod-identity-agent",
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group]),
            )
            self.workload_dependencies.append(pod_identity)

        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "kubernetesVersion": self.kubernetes_version,
                "endpoint": self.endpoint,
                "vpcId": self.vpc_id,
                "privateSubnetIds": self.private_subnet_ids,
                "publicSubnetIds": self.public_subnet_ids,
                "nodeRoleArn": self.node_role_arn,
                "kubeconfig": self.kubeconfig,
            }
        )

    # ---------------------------------------------------------------------------------------------
    def _adopt(self, config: ClusterConfig) -> None:
        existing = aws.eks.get_cluster(name=config.name)
        if existing.version != config.kubernetes_version:
            raise ConfigError(
                f"{stack_file_name()}: cluster.kubernetesVersion = {json.dumps(config.kubernetes_version)}: the "
                f"existing cluster {config.name!r} runs Kubernetes {existing.version}; nearest valid choice: "
                f"{json.dumps(existing.version)}"
            )
        vpc = existing.vpc_config
        self.cluster_name = pulumi.Output.from_input(existing.name)
        self.kubernetes_version = pulumi.Output.from_input(existing.version)
        self.endpoint = pulumi.Output.from_input(existing.endpoint)
        self.certificate_authority_data = pulumi.Output.from_input(existing.certificate_authorities[0].data)
        self.cluster_security_group_id = pulumi.Output.from_input(vpc.cluster_security_group_id)
        self.vpc_id = pulumi.Output.from_input(vpc.vpc_id)
        self.private_subnet_ids = pulumi.Output.from_input(list(vpc.subnet_ids))
        self.public_subnet_ids = pulumi.Output.from_input([])

    def _create(self, config: ClusterConfig) -> aws.eks.Cluster:
        name = self._name
        child = pulumi.ResourceOptions(parent=self)
        zones = aws.get_availability_zones(state="available").names
        if len(zones) < config.availability_zones:
            raise ConfigError(
                f"{stack_file_name()}: cluster.availabilityZones = {config.availability_zones}: the region has "
                f"only {len(zones)} available zones; nearest valid choice: {len(zones)}"
            )
        zones = sorted(zones)[: config.availability_zones]
        private_cidrs, public_cidrs = subnet_cidrs(config.vpc_cidr, config.availability_zones)

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=config.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": f"{config.name}-vpc"},
            opts=child,
        )
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags={"Name": f"{config.name}-igw"},
                                      opts=child)
        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            tags={"Name": f"{config.name}-public"},
            opts=child,
        )
        public_subnets: list[aws.ec2.Subnet] = []
        private_subnets: list[aws.ec2.Subnet] = []
        nat_gateways: list[aws.ec2.NatGateway] = []
        for i, zone in enumerate(zones):
            public = aws.ec2.Subnet(
                f"{name}-public-{i}",
                vpc_id=vpc.id,
                cidr_block=public_cidrs[i],
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags={"Name": f"{config.name}-public-{zone}", PUBLIC_SUBNET_ROLE_TAG: "1"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(f"{name}-public-{i}", subnet_id=public.id, route_table_id=public_rt.id,
                                          opts=child)
            public_subnets.append(public)
            if i == 0 or not config.single_nat_gateway:
                eip = aws.ec2.Eip(f"{name}-nat-{i}", domain="vpc", tags={"Name": f"{config.name}-nat-{zone}"},
                                  opts=child)
                nat_gateways.append(aws.ec2.NatGateway(
                    f"{name}-nat-{i}",
                    allocation_id=eip.id,
                    subnet_id=public.id,
                    tags={"Name": f"{config.name}-nat-{zone}"},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                ))
        for i, zone in enumerate(zones):
            private = aws.ec2.Subnet(
                f"{name}-private-{i}",
                vpc_id=vpc.id,
                cidr_block=private_cidrs[i],
                availability_zone=zone,
                tags={
                    "Name": f"{config.name}-private-{zone}",
                    PRIVATE_SUBNET_ROLE_TAG: "1",
                    KARPENTER_DISCOVERY_TAG: config.name,
                },
                opts=child,
            )
            nat = nat_gateways[0 if config.single_nat_gateway else i]
            route_table = aws.ec2.RouteTable(
                f"{name}-private-rt-{i}",
                vpc_id=vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags={"Name": f"{config.name}-private-{zone}"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(f"{name}-private-{i}", subnet_id=private.id,
                                          route_table_id=route_table.id, opts=child)
            private_subnets.append(private)

        cluster_role = aws.iam.Role(
            f"{name}-cluster-role",
            assume_role_policy=iam.assume_role_policy("eks.amazonaws.com"),
            description=f"EKS control plane of {config.name}",
            opts=child,
        )
        # Source: https://docs.aws.amazon.com/eks/latest/userguide/cluster-iam-role.html
        cluster_policy = aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=cluster_role.name,
            policy_arn=iam.managed_policy_arn("AmazonEKSClusterPolicy"),
            opts=child,
        )
        secrets_key = aws.kms.Key(
            f"{name}-secrets-key",
            description=f"Envelope encryption of Kubernetes Secrets in EKS cluster {config.name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            opts=child,
        )
        aws.kms.Alias(f"{name}-secrets-key", name=f"alias/{config.name}-eks-secrets",
                      target_key_id=secrets_key.key_id, opts=child)
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-control-plane-logs",
            name=f"/aws/eks/{config.name}/cluster",
            retention_in_days=LOG_RETENTION_DAYS,
            opts=child,
        )
        public_access = bool(config.endpoint_public_access_cidrs)
        cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=config.name,
            version=config.kubernetes_version,
            role_arn=cluster_role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=[s.id for s in private_subnets],
                endpoint_private_access=True,
                endpoint_public_access=public_access,
                public_access_cidrs=list(config.endpoint_public_access_cidrs) if public_access else None,
            ),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                # The identity running `pulumi up` installs the Helm releases through the Kubernetes API,
                # so it keeps the creator's admin access entry; everyone else gets explicit entries.
                bootstrap_cluster_creator_admin_permissions=True,
            ),
            bootstrap_self_managed_addons=True,
            enabled_cluster_log_types=list(CONTROL_PLANE_LOG_TYPES),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=secrets_key.arn),
                resources=["secrets"],
            ),
            tags={"Name": config.name},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cluster_policy, log_group]),
        )
        self.cluster_name = cluster.name
        self.kubernetes_version = cluster.version
        self.endpoint = cluster.endpoint
        self.certificate_authority_data = cluster.certificate_authority.apply(lambda ca: ca.data or "")
        self.cluster_security_group_id = cluster.vpc_config.apply(lambda v: v.cluster_security_group_id or "")
        self.vpc_id = vpc.id
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private_subnets]).apply(list)
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in public_subnets]).apply(list)
        return cluster

    def _access_entries(self, config: ClusterConfig) -> list[pulumi.Resource]:
        """Read-only view for the operations principal; cluster admin for `adminPrincipalArns`."""
        created: list[pulumi.Resource] = []
        grants: list[tuple[str, str, str]] = []
        if config.ops_read_only_principal_arn:
            grants.append(("ops-readonly", config.ops_read_only_principal_arn, iam.VIEW_POLICY))
        grants += [(f"admin-{i}", arn, iam.CLUSTER_ADMIN_POLICY) for i, arn in enumerate(config.admin_principal_arns)]
        for role, principal, policy in grants:
            entry = aws.eks.AccessEntry(
                f"{self._name}-{role}",
                cluster_name=self.cluster_name,
                principal_arn=principal,
                type="STANDARD",
                opts=pulumi.ResourceOptions(parent=self),
            )
            association = aws.eks.AccessPolicyAssociation(
                f"{self._name}-{role}",
                cluster_name=self.cluster_name,
                principal_arn=principal,
                policy_arn=iam.access_policy_arn(policy),
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]),
            )
            created += [entry, association]
        return created
