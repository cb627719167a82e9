"""Cluster: the VPC, the EKS control plane on pulumi-eks, access entries, the system node group, add-ons.

The control plane is `pulumi_eks.Cluster` (the Pulumi-native EKS component, pinned in requirements.txt):
it wires the cluster role, the EKS-managed security group, the kubeconfig, access entries and the
VPC CNI / kube-proxy managed add-ons that this module used to build by hand. It is a remote
(multi-language) component: the real engine registers and analyzes its children (the
`aws:eks/cluster:Cluster` that `eks-control-plane-hardened` judges), never its own inputs; the offline
preview sees only the inputs, which the tests assert one by one (tests/components/test_eks_control_plane.py).

Node groups stay on `pulumi_aws`: pulumi-eks's `ManagedNodeGroup` and `NodeGroupV2` are remote
components too, so offline the policy pack and the tests would lose every input they judge on a node
pool (the GPU taint and label contract, `amiType CUSTOM` without `version`, the launch template's
IMDSv2 and encrypted root volume, the bootstrap user data, the kubelet-version tag). The system node
group, the GPU pools and the add-ons that need nodes (CoreDNS on the system nodes, the Pod Identity
agent) are therefore `pulumi_aws` resources next to the component.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from components import access, iam, labels
from components.config import SERVICE_IPV4_CIDR, ClusterConfig, ConfigError, SystemNodeGroupConfig, stack_file_name
from components.deploy_checks import (
    check_caller_is_creator,
    check_deployer_access,
    check_preview_principal_not_creator,
    cluster_creator,
    deploying_principal,
)
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

__all__ = ["SERVICE_IPV4_CIDR", "Cluster", "access_grants", "cluster_dns_ip", "kubeconfig_json"]

# Availability Zones EKS accepts for the control plane: the region's own zones, never Local Zones or
# Wavelength Zones (opted-in zones report `opted-in`, the region's own `opt-in-not-required`).
# Source: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeAvailabilityZones.html (opt-in-status)
# Source: https://docs.aws.amazon.com/eks/latest/userguide/local-zones.html (control plane not in Local Zones)
REGION_ZONE_FILTER = aws.GetAvailabilityZonesFilterArgs(name="opt-in-status", values=["opt-in-not-required"])
# Zone IDs (the same physical zone in every account, unlike zone names) where EKS does not place a
# control plane: CreateCluster refuses subnets there. Source: "Subnet requirements and considerations",
# https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html
CONTROL_PLANE_EXCLUDED_ZONE_IDS: frozenset[str] = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})

# The VPC is cut into 16 equal subnets: private subnets take the first ones, public ones start at the 9th.
_SUBNET_SPLIT_BITS = 4
_PUBLIC_OFFSET = 8


def subnet_cidrs(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """(private, public) subnet CIDRs, one of each per zone, carved from the VPC CIDR."""
    blocks = list(ipaddress.IPv4Network(vpc_cidr).subnets(prefixlen_diff=_SUBNET_SPLIT_BITS))
    private = [str(blocks[i]) for i in range(zones)]
    public = [str(blocks[_PUBLIC_OFFSET + i]) for i in range(zones)]
    return private, public


def cluster_dns_ip(service_cidr: str) -> str:
    """The cluster DNS Service address: the 10th address of the service range (172.20.0.10 for 172.20.0.0/16).

    Source: https://github.com/awslabs/amazon-eks-ami/blob/main/templates/al2/runtime/bootstrap.sh
    (`--dns-cluster-ip`, and the `.10` address it derives from the service CIDR)
    """
    return str(ipaddress.IPv4Network(service_cidr)[10])


def kubeconfig_endpoint_and_ca(kubeconfig: object) -> tuple[str, str]:
    """(API server URL, base64 CA data) of the first cluster of a kubeconfig object."""
    config = json.loads(kubeconfig) if isinstance(kubeconfig, str) else kubeconfig
    if not isinstance(config, dict) or not config.get("clusters"):
        raise ValueError("the pulumi-eks kubeconfig output has no cluster entry")
    cluster = config["clusters"][0]["cluster"]
    return str(cluster["server"]), str(cluster["certificate-authority-data"])


@dataclass(frozen=True)
class AwsCredentials:
    """How the AWS provider authenticates, beyond the default chain: a named profile and an assumed role."""

    profile: str | None = None
    role_arn: str | None = None

    def get_token_args(self) -> list[str]:
        """`aws eks get-token` options that authenticate as the AWS provider does.

        Source: https://awscli.amazonaws.com/v2/documentation/api/latest/reference/eks/get-token.html
        (`--role-arn`), https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-options.html (`--profile`)
        """
        args: list[str] = []
        if self.role_arn:
            args += ["--role-arn", self.role_arn]
        if self.profile:
            args += ["--profile", self.profile]
        return args


def aws_credentials() -> AwsCredentials:
    """`aws:profile` and `aws:assumeRoles` of the stack: what the AWS provider authenticates with.

    pulumi-eks builds its exported kubeconfig without the profile (cluster.ts: "one with the profile name
    and one without"), so a Kubernetes provider on it reaches the cluster as the default chain's identity:
    Unauthorized under a named profile (pulumi-eks#669). A chain of several assumed roles cannot be
    expressed as `aws eks get-token` options; it belongs in an AWS CLI profile (`role_arn` +
    `source_profile`), named by `aws:profile`.
    Source: https://github.com/pulumi/pulumi-eks/blob/v4.3.0/nodejs/eks/cluster/cluster.ts#L906-L910
    Source: https://github.com/pulumi/pulumi-eks/issues/669
    Source: https://www.pulumi.com/registry/packages/aws/installation-configuration/ (profile, assumeRoles)
    Source: https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-role.html (role_arn, source_profile)
    """
    config = pulumi.Config("aws")
    roles = config.get_object("assumeRoles") or []
    if not isinstance(roles, list):
        roles = [roles]
    if len(roles) > 1:
        raise ConfigError(
            f"{stack_file_name()}: aws:assumeRoles = ({len(roles)} roles): the Kubernetes provider authenticates "
            "with `aws eks get-token`, which assumes one role; fix: put the chain into an AWS CLI profile "
            "(role_arn and source_profile in ~/.aws/config) and name it in aws:profile instead"
        )
    role = roles[0].get("roleArn") if roles and isinstance(roles[0], dict) else None
    return AwsCredentials(profile=config.get("profile"), role_arn=str(role) if role else None)


def kubeconfig_json(
    cluster_name: str, endpoint: str, ca_data: str, region: str, *, credentials: AwsCredentials | None = None
) -> str:
    """A kubeconfig that authenticates with `aws eks get-token` (the caller's AWS credentials).

    Source: https://docs.aws.amazon.com/eks/latest/userguide/create-kubeconfig.html
    """
    extra = credentials.get_token_args() if credentials else []
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
                                     "--output", "json", *extra],
                        }
                    },
                }
            ],
        },
        sort_keys=True,
    )


class Cluster(pulumi.ComponentResource):
    """An EKS cluster for GPU inference, or an adopted existing one, plus its system node group.

    New cluster (`existing: false`): a VPC with a public and a private subnet in each of the region's
    own zones, chosen by zone ID without the IDs EKS refuses (IGW, NAT gateways, route tables; subnets
    tagged for the load balancer controller and Karpenter discovery) and a `pulumi_eks.Cluster` with no
    default node group, authentication mode `API` (access entries, this component's children keyed by
    principal, components/access.py: deployers and admins with cluster-admin, the pull-request
    preview roles and the read-only operations role with AmazonEKSViewPolicy; the identity running the
    creating `pulumi up` has EKS's creator entry, which pulumi-eks always grants and a later run adopts),
    Secrets encrypted with a rotating customer-managed KMS key, all five log types into a
    `/aws/eks/<name>/cluster` group with a retention (adopted when a destroyed cluster left it behind),
    the private endpoint on and the public endpoint limited to `endpointPublicAccessCidrs` (off when
    empty), deletion protection and the upgrade policy's support type from the stack, VPC CNI and
    kube-proxy as managed add-ons; CoreDNS (on the system nodes) and the Pod Identity agent as managed
    add-ons once the system nodes exist. The Kubernetes provider uses the component's kubeconfig.
    Existing cluster (`existing: true`): the cluster is looked up by name; no VPC, control plane or
    add-on is created (the cluster owns those), node groups go into the cluster's subnets, access
    entries are created next to it.

    Requires: AWS credentials for the target account and region; `aws` CLI on the machine running
    Pulumi (the kubeconfig authenticates with `aws eks get-token`); the pulumi-eks provider plugin.
    Conflicts: `existing: true` with a cluster whose version differs from `kubernetesVersion`; an
    existing cluster where the identity running `pulumi up` has no access entry and is not listed
    (components.deploy_checks.check_deployer_access stops the up).
    Sources:
    - pulumi-eks Cluster inputs: https://www.pulumi.com/registry/packages/eks/api-docs/cluster/
    - pulumi-eks grants the creator admin (`bootstrapClusterCreatorAdminPermissions: true` whenever
      `authenticationMode` is set, in `ignoreChanges`): nodejs/eks/cluster/cluster.ts 733-752 at
      https://github.com/pulumi/pulumi-eks/blob/7bf0c1b1/nodejs/eks/cluster/cluster.ts#L733-L752
      (the same lines at v4.3.0)
    - Access entries and policies: https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html
    - Secrets envelope encryption: https://docs.aws.amazon.com/eks/latest/userguide/envelope-encryption.html
    - Endpoint access: https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html
    - Deletion protection and upgrade policy: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html
    - Pod Identity agent add-on: https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html
    - CoreDNS add-on configuration (nodeSelector): https://docs.aws.amazon.com/eks/latest/userguide/coredns-add-on-create.html
    - EKS MCP server read-only mode: https://awslabs.github.io/mcp/servers/eks-mcp-server/
    """

    eks_name: str
    cluster_name: pulumi.Output[str]
    kubernetes_version: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    certificate_authority_data: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    service_ipv4_cidr: pulumi.Output[str]
    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    public_subnet_ids: pulumi.Output[list[str]]
    zones: list[str]  # Availability Zones of the private subnets (where nodes run)
    node_role_arn: pulumi.Output[str]
    node_role_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    control_plane: eks.Cluster | None
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
        self.eks_name = config.name
        region = aws.get_region().region

        node_role, node_attachments = iam.node_role(name, self)
        self.node_role_arn = node_role.arn
        self.node_role_name = node_role.name

        credentials = aws_credentials()
        if config.existing:
            self.control_plane = None
            self._adopt(config)
            self.kubeconfig = pulumi.Output.secret(
                pulumi.Output.all(self.cluster_name, self.endpoint, self.certificate_authority_data).apply(
                    lambda args: kubeconfig_json(args[0], args[1], args[2], region)
                )
            )
        else:
            self.control_plane = self._create(config, credentials)
            self.kubeconfig = pulumi.Output.secret(self.control_plane.kubeconfig_json)
        access = self._access_entries(config)

        self.system_node_group = SystemNodeGroup(
            f"{name}-system",
            system_node_group,
            cluster_name=self.cluster_name,
            kubernetes_version=self.kubernetes_version,
            node_role_arn=self.node_role_arn,
            subnet_ids=self.private_subnet_ids,
            depends_on=[*node_attachments, *([self.control_plane] if self.control_plane else [])],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.workload_dependencies = [self.system_node_group, *access]
        if not config.existing:
            self.workload_dependencies += self._node_add_ons()

        # The provider authenticates as the AWS provider does (its profile, its assumed role), not as the
        # exported kubeconfig, which pulumi-eks builds without the profile for people to use.
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self._provider_kubeconfig(region, credentials),
            # Kubernetes steps start once the access entries exist: a deployer listed for the first time
            # gets its entry before its first Kubernetes request.
            opts=pulumi.ResourceOptions(parent=self, depends_on=access),
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
    def _provider_kubeconfig(self, region: str, credentials: AwsCredentials) -> pulumi.Output[str]:
        """The Kubernetes provider's kubeconfig: `aws eks get-token` with the AWS provider's profile and role."""
        def build(args: list[str]) -> str:
            return kubeconfig_json(args[0], args[1], args[2], region, credentials=credentials)

        config: pulumi.Output[str] = pulumi.Output.all(
            self.cluster_name, self.endpoint, self.certificate_authority_data).apply(build)
        return pulumi.Output.secret(config)

    def _adopt(self, config: ClusterConfig) -> None:
        existing = aws.eks.get_cluster(name=config.name)
        if existing.version != config.kubernetes_version:
            raise ConfigError(
                f"{stack_file_name()}: cluster.kubernetesVersion = {json.dumps(config.kubernetes_version)}: the "
                f"existing cluster {config.name!r} runs Kubernetes {existing.version}; nearest valid choice: "
                f"{json.dumps(existing.version)}"
            )
        vpc = existing.vpc_config
        network = existing.kubernetes_network_configs[0] if existing.kubernetes_network_configs else None
        self.cluster_name = pulumi.Output.from_input(existing.name)
        self.kubernetes_version = pulumi.Output.from_input(existing.version)
        self.endpoint = pulumi.Output.from_input(existing.endpoint)
        self.certificate_authority_data = pulumi.Output.from_input(existing.certificate_authorities[0].data)
        self.cluster_security_group_id = pulumi.Output.from_input(vpc.cluster_security_group_id)
        self.service_ipv4_cidr = pulumi.Output.from_input(
            network.service_ipv4_cidr if network and network.service_ipv4_cidr else SERVICE_IPV4_CIDR
        )
        self.vpc_id = pulumi.Output.from_input(vpc.vpc_id)
        self.private_subnet_ids = pulumi.Output.from_input(list(vpc.subnet_ids))
        self.public_subnet_ids = pulumi.Output.from_input([])
        self.zones = sorted({aws.ec2.get_subnet(id=subnet).availability_zone for subnet in vpc.subnet_ids})

    def _network(self, config: ClusterConfig) -> tuple[aws.ec2.Vpc, list[aws.ec2.Subnet], list[aws.ec2.Subnet]]:
        """The VPC, its private subnets and its public subnets, one of each per zone."""
        name = self._name
        child = pulumi.ResourceOptions(parent=self)
        found = aws.get_availability_zones(state="available", filters=[REGION_ZONE_FILTER],
                                           exclude_zone_ids=sorted(CONTROL_PLANE_EXCLUDED_ZONE_IDS))
        # By zone ID: a zone name maps to a different physical zone in each account, the ID does not, so
        # every account (and the exclusion list above) means the same zones.
        # Source: https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html
        usable = sorted(z for z in found.zone_ids if z not in CONTROL_PLANE_EXCLUDED_ZONE_IDS)
        if len(usable) < config.availability_zones:
            raise ConfigError(
                f"{stack_file_name()}: cluster.availabilityZones = {config.availability_zones}: the region has "
                f"only {len(usable)} available zones of its own that EKS accepts for a control plane (Local "
                f"and Wavelength Zones and the zone IDs {', '.join(sorted(CONTROL_PLANE_EXCLUDED_ZONE_IDS))} do "
                f"not count); nearest valid choice: {len(usable)}"
            )
        zones = usable[: config.availability_zones]
        # The zone names of the chosen IDs (FSR and other zone-scoped APIs take names); same order as the IDs.
        name_of = dict(zip(found.zone_ids, found.names, strict=True))
        self.zones = [name_of[zone_id] for zone_id in zones]
        private_cidrs, public_cidrs = subnet_cidrs(config.vpc_cidr, config.availability_zones)

        # deletionProtection also protects the network the cluster lives in and the NAT addresses its egress leaves
        # from (partners allow-list them; a new Elastic IP is a new address): a replace or a delete of either stops
        # before its step instead of taking prod's networking down (docs/ci-cd.md, "What protect and retainOnDelete
        # cover"; https://www.pulumi.com/docs/iac/concepts/options/protect/).
        kept = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=config.deletion_protection))
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=config.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": f"{config.name}-vpc"},
            opts=kept,
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
                availability_zone_id=zone,
                map_public_ip_on_launch=False,
                tags={"Name": f"{config.name}-public-{zone}", PUBLIC_SUBNET_ROLE_TAG: "1"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(f"{name}-public-{i}", subnet_id=public.id, route_table_id=public_rt.id,
                                          opts=child)
            public_subnets.append(public)
            if i == 0 or not config.single_nat_gateway:
                eip = aws.ec2.Eip(f"{name}-nat-{i}", domain="vpc", tags={"Name": f"{config.name}-nat-{zone}"},
                                  opts=kept)
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
                availability_zone_id=zone,
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
        return vpc, private_subnets, public_subnets

    def _log_group(self, config: ClusterConfig) -> aws.cloudwatch.LogGroup:
        """The control-plane log group, created with a retention, or adopted when it already exists.

        After `pulumi destroy` EKS writes its last logs and recreates `/aws/eks/<name>/cluster` with no
        retention, so a rebuild under the same name would fail with ResourceAlreadyExistsException. When
        the group exists, the `import` option adopts it: the engine imports a resource that is not in the
        state yet, treats one already imported under that id as any other resource, and (since
        pulumi/pulumi#19339) updates an imported resource whose inputs differ instead of failing.
        Source: https://docs.aws.amazon.com/eks/latest/userguide/control-plane-logs.html
        Source: https://github.com/pulumi/pulumi/blob/master/developer-docs/architecture/import.md
        Source: https://www.pulumi.com/docs/iac/concepts/resources/options/import/
        """
        group_name = f"/aws/eks/{config.name}/cluster"
        found = aws.cloudwatch.get_log_groups(log_group_name_prefix=group_name).log_group_names or []
        return aws.cloudwatch.LogGroup(
            f"{self._name}-control-plane-logs",
            name=group_name,
            retention_in_days=LOG_RETENTION_DAYS,
            opts=pulumi.ResourceOptions(parent=self, import_=group_name if group_name in found else None),
        )

    def _create(self, config: ClusterConfig, credentials: AwsCredentials) -> eks.Cluster:
        name = self._name
        child = pulumi.ResourceOptions(parent=self)
        vpc, private_subnets, public_subnets = self._network(config)
        secrets_key = aws.kms.Key(
            f"{name}-secrets-key",
            description=f"Envelope encryption of Kubernetes Secrets in EKS cluster {config.name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            # deletionProtection also protects the key: deleting it loses every Secret the cluster encrypted.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=config.deletion_protection)),
        )
        aws.kms.Alias(f"{name}-secrets-key", name=f"alias/{config.name}-eks-secrets",
                      target_key_id=secrets_key.key_id, opts=child)
        log_group = self._log_group(config)
        public_access = bool(config.endpoint_public_access_cidrs)
        control_plane = eks.Cluster(
            f"{name}-eks",
            name=config.name,
            version=config.kubernetes_version,
            vpc_id=vpc.id,
            subnet_ids=[s.id for s in private_subnets],
            endpoint_private_access=True,
            endpoint_public_access=public_access,
            # pulumi-eks refuses publicAccessCidrs with the public endpoint off.
            public_access_cidrs=list(config.endpoint_public_access_cidrs) if public_access else None,
            skip_default_node_group=True,
            # The EKS-created cluster security group only: managed node groups join it, and
            # clusterSecurityGroupId is that group (what self-managed GPU nodes attach).
            skip_default_security_groups=True,
            authentication_mode=eks.AuthenticationMode.API,
            # Access entries are this component's own children, keyed by principal (components/access.py):
            # pulumi-eks creates its `accessEntries` without the import option that adopting the creator's
            # entry needs. Its kubeconfig gets the provider's profile and role too.
            provider_credential_opts=(
                eks.KubeconfigOptionsArgs(profile_name=credentials.profile, role_arn=credentials.role_arn)
                if credentials.profile or credentials.role_arn else None
            ),
            encryption_config_key_arn=secrets_key.arn,
            enabled_cluster_log_types=list(CONTROL_PLANE_LOG_TYPES),
            deletion_protection=config.deletion_protection,
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=config.support_type.upper()),
            kubernetes_service_ip_address_range=SERVICE_IPV4_CIDR,
            # Only managed add-ons: VPC CNI and kube-proxy from pulumi-eks; CoreDNS and the Pod Identity
            # agent below, once the system nodes they run on exist (pulumi-eks would not create the
            # CoreDNS add-on without its default node group).
            bootstrap_self_managed_addons=False,
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=False),
            kube_proxy_addon_options=eks.KubeProxyAddonOptionsArgs(enabled=True),
            use_default_vpc_cni=False,
            # Workloads get AWS credentials from EKS Pod Identity, not IRSA.
            create_oidc_provider=False,
            tags={"Name": config.name},
            # `pulumi destroy` stops at a protected cluster too (deletionProtection: true in prod).
            opts=pulumi.ResourceOptions(parent=self, depends_on=[log_group], protect=config.deletion_protection),
        )
        endpoint_and_ca = control_plane.kubeconfig.apply(kubeconfig_endpoint_and_ca)
        # The EKS cluster's name and version are the `name` and `version` inputs, known at preview (the
        # policy pack reads them on node groups); everything that needs the cluster to exist depends on
        # the control plane (the system node group) or on the system node group.
        self.cluster_name = pulumi.Output.from_input(config.name)
        self.kubernetes_version = pulumi.Output.from_input(config.kubernetes_version)
        self.endpoint = endpoint_and_ca.apply(lambda pair: pair[0])
        self.certificate_authority_data = endpoint_and_ca.apply(lambda pair: pair[1])
        self.cluster_security_group_id = control_plane.cluster_security_group_id
        self.service_ipv4_cidr = pulumi.Output.from_input(SERVICE_IPV4_CIDR)
        self.vpc_id = vpc.id
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private_subnets]).apply(list)
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in public_subnets]).apply(list)
        return control_plane

    def _node_add_ons(self) -> list[pulumi.Resource]:
        """Managed add-ons that only become ACTIVE on nodes: they wait for the system node group."""
        after_nodes = pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group])
        coredns = aws.eks.Addon(
            f"{self._name}-coredns",
            cluster_name=self.cluster_name,
            addon_name="coredns",
            configuration_values=json.dumps({"nodeSelector": labels.system_node_selector()}, sort_keys=True),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=after_nodes,
        )
        pod_identity = aws.eks.Addon(
            f"{self._name}-pod-identity-agent",
            cluster_name=self.cluster_name,
            addon_name="eks-pod-identity-agent",
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=after_nodes,
        )
        return [coredns, pod_identity]

    def _access_entries(self, config: ClusterConfig) -> list[pulumi.Resource]:
        """One access entry per principal of the cluster section (components/access.py), after the control plane.

        A cluster that does not exist yet: its creator (`cluster_creator`: the first deployer, from the
        configuration, so that a preview role's saved plan and the deploy role's `up --plan` agree) is left to
        EKS's creator entry. A cluster that exists: entries EKS already holds are adopted.
        """
        grants = access_grants(config)
        deployer = deploying_principal()
        exists = config.existing or access.cluster_exists(config.name)
        adopt = access.existing_entries(config.name, [g.principal_arn for g in grants]) if exists else set()
        check_preview_principal_not_creator(config, deployer, cluster_exists=exists)
        check_caller_is_creator(config, deployer, cluster_exists=exists)
        if deployer not in {g.principal_arn for g in grants} and (exists or not config.deployer_principal_arns):
            check_deployer_access(config, deployer, cluster_exists=exists,
                                  has_entry=exists and access.entry_exists(config.name, deployer))
        return access.access_entries(
            self._name, config.name, grants, parent=self, adopt=adopt,
            skip=set() if exists else {cluster_creator(config, deployer)},
            depends_on=[self.control_plane] if self.control_plane else [],
            legacy=self._legacy_access_names(config),
        )

    def _legacy_access_names(
        self, config: ClusterConfig
    ) -> dict[str, tuple[list[pulumi.Alias], list[pulumi.Alias]]]:
        """The names the entries had when they were keyed by position, so that a deployed stack keeps them.

        Each principal is aliased to the name its position gives it now, which is its old name only when
        the lists are the same as at the last `pulumi up` of the position-keyed release: change the
        lists in a later run than the one that moves a stack to this release. Once the stack holds the
        principal-keyed names, the engine ignores these aliases (no old resource carries them).

        New clusters: pulumi-eks children `<name>-eks-<key>` (association `<name>-eks-<key>-<policy>`, child
        of the entry); adopted clusters: `<name>-<key>` for both. Keys: `ops-readonly`, `admin-<index>`.
        """
        keyed: list[tuple[str, str, str]] = []
        if config.ops_read_only_principal_arn:
            keyed.append(("ops-readonly", config.ops_read_only_principal_arn, iam.VIEW_POLICY))
        keyed += [(f"admin-{i}", arn, iam.CLUSTER_ADMIN_POLICY) for i, arn in enumerate(config.admin_principal_arns)]
        legacy: dict[str, tuple[list[pulumi.Alias], list[pulumi.Alias]]] = {}
        for key, principal, policy in keyed:
            if self.control_plane is None:
                old = f"{self._name}-{key}"
                legacy[principal] = ([pulumi.Alias(name=old)], [pulumi.Alias(name=old)])
            else:
                old = f"{self._name}-eks-{key}"
                old_entry = pulumi.create_urn(old, "aws:eks/accessEntry:AccessEntry", parent=self.control_plane)
                legacy[principal] = ([pulumi.Alias(name=old, parent=self.control_plane)],
                                     [pulumi.Alias(name=f"{old}-{policy}", parent=old_entry)])
        return legacy


# The EKS access policy of each principal list (docs/ci-cd.md, "Who can write where"; tests/ci/test_access.py
# checks that table and that no preview principal can write). The pull-request preview roles get the view
# policy: a pull request runs its own workflow file and program with them, so they must not be able to write
# (pulumi-kubernetes previews an object from its inputs when the server-side dry run is forbidden,
# provider/pkg/provider/provider.go Create 1798-1803, Update 2455-2458 at pulumi/pulumi-kubernetes 94977969).
ACCESS_POLICY_BY_KEY: dict[str, str] = {
    "opsReadOnlyPrincipalArn": iam.VIEW_POLICY,
    "previewPrincipalArns": iam.VIEW_POLICY,
    "deployerPrincipalArns": iam.CLUSTER_ADMIN_POLICY,
    "adminPrincipalArns": iam.CLUSTER_ADMIN_POLICY,
}


def access_grants(config: ClusterConfig) -> list[access.AccessGrant]:
    """The access of every principal of the cluster section: view for the operations and preview roles, admin
    for deployers and admins."""
    return [access.AccessGrant(arn, ACCESS_POLICY_BY_KEY[str(path[0])]) for path, arn in config.principals()]
