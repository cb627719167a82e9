"""Which AWS API calls a preview and a deploy of this program make, per data source, provider and resource type.

Action names and what each call returns: the Service Authorization Reference
(<https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html>,
one page per service, e.g. `list_amazonec2.html`, `list_amazoneks.html`). Which calls a data source or a resource makes:
the Terraform AWS provider that pulumi-aws bridges (`internal/service/<service>/<resource>[_data_source].go` of
hashicorp/terraform-provider-aws), and for the pulumi-eks component provider its own source (pulumi/pulumi-eks
`nodejs/eks`, commit 7bf0c1b179932ce51cb02dfc4f9bd0d7550cb0cd).
"""

from __future__ import annotations

TF = "https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/"

# Data sources (invokes) the program's code can call -> (API calls, source). A data source that runs no AWS call
# (computed on the client, from the provider's own configuration) maps to ().
DATA_SOURCE_CALLS: dict[str, tuple[tuple[str, ...], str]] = {
    "aws:autoscaling/getAmiIds:getAmiIds": (("autoscaling:DescribeAutoScalingGroups",),
                                            TF + "autoscaling/groups_data_source.go"),
    "aws:autoscaling/getGroup:getGroup": (("autoscaling:DescribeAutoScalingGroups",),
                                          TF + "autoscaling/group_data_source.go"),
    "aws:cloudwatch/getLogGroups:getLogGroups": (("logs:DescribeLogGroups",),
                                                 TF + "logs/groups_data_source.go"),
    "aws:ec2/getAmi:getAmi": (("ec2:DescribeImages",), TF + "ec2/ec2_ami_data_source.go"),
    "aws:ec2/getSubnet:getSubnet": (("ec2:DescribeSubnets",), TF + "ec2/vpc_subnet_data_source.go"),
    "aws:ec2/getSubnets:getSubnets": (("ec2:DescribeSubnets",), TF + "ec2/vpc_subnets_data_source.go"),
    "aws:ec2/getVpc:getVpc": (("ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeRouteTables"),
                              TF + "ec2/vpc_data_source.go"),
    "aws:eks/getAccessEntry:getAccessEntry": (("eks:DescribeAccessEntry",), TF + "eks/access_entry_datasource.go"),
    "aws:eks/getCluster:getCluster": (("eks:DescribeCluster",), TF + "eks/cluster_data_source.go"),
    "aws:eks/getClusterAuth:getClusterAuth": ((), TF + "eks/cluster_auth_data_source.go (a presigned "
                                              "sts:GetCallerIdentity URL, signed on the client)"),
    "aws:eks/getClusters:getClusters": (("eks:ListClusters",), TF + "eks/clusters_data_source.go"),
    "aws:eks/getNodeGroup:getNodeGroup": (("eks:DescribeNodegroup",), TF + "eks/node_group_data_source.go"),
    "aws:eks/getNodeGroups:getNodeGroups": (("eks:ListNodegroups",), TF + "eks/node_groups_data_source.go"),
    "aws:iam/getPolicyDocument:getPolicyDocument": ((), TF + "iam/policy_document_data_source.go (rendered on "
                                                    "the client)"),
    "aws:iam/getRole:getRole": (("iam:GetRole",), TF + "iam/role_data_source.go"),
    "aws:iam/getRoles:getRoles": (("iam:ListRoles",), TF + "iam/roles_data_source.go"),
    "aws:iam/getSessionContext:getSessionContext": (("iam:GetRole",), TF + "iam/session_context_data_source.go "
                                                    "(the role of an assumed-role ARN)"),
    "aws:index/getAvailabilityZones:getAvailabilityZones": (("ec2:DescribeAvailabilityZones",),
                                                            TF + "meta/availability_zones_data_source.go"),
    "aws:index/getCallerIdentity:getCallerIdentity": (("sts:GetCallerIdentity",),
                                                      TF + "meta/caller_identity_data_source.go"),
    "aws:index/getPartition:getPartition": ((), TF + "meta/partition_data_source.go (the provider's configuration)"),
    "aws:index/getRegion:getRegion": ((), TF + "meta/region_data_source.go (the provider's configuration and "
                                      "endpoint data)"),
    "aws:kms/getAlias:getAlias": (("kms:ListAliases", "kms:DescribeKey"), TF + "kms/alias_data_source.go"),
    "aws:kms/getKey:getKey": (("kms:DescribeKey",), TF + "kms/key_data_source.go"),
    # Only the public parameters AWS and Canonical publish (arn:aws:ssm:<region>::parameter/aws/service/...):
    # documents.PUBLIC_PARAMETERS scopes it, and the account's own parameters are denied.
    "aws:ssm/getParameter:getParameter": (("ssm:GetParameter",), TF + "ssm/parameter_data_source.go"),
}

# Calls the providers make in every preview and update, whatever the program does.
PROVIDER_CALLS: dict[str, tuple[tuple[str, ...], str]] = {
    "pulumi-aws provider configuration": (
        ("sts:GetCallerIdentity",),
        "https://www.pulumi.com/registry/packages/aws/api-docs/provider/ (skipCredentialsValidation and "
        "skipRequestingAccountId, both false by default: the provider asks STS who it is)"),
    "pulumi-eks component provider (eks:index:Cluster and its children)": (
        ("ec2:DescribeImages", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes",
         "ec2:DescribeRouteTables", "ec2:DescribeSubnets", "ec2:DescribeVpcs", "ec2:DescribeVpcAttribute",
         "eks:DescribeAddonVersions", "sts:GetCallerIdentity"),
        "pulumi/pulumi-eks nodejs/eks at 7bf0c1b179932ce51cb02dfc4f9bd0d7550cb0cd: aws.ec2.getAmi, "
        "getInstanceTypeOfferings, getInstanceType, getRouteTable(s), getSubnet(s), getVpc, "
        "aws.eks.getAddonVersion, aws.getCallerIdentity (its ssm.getParameter reads the public AMI parameters)"),
    "tools.preview_access (the preview jobs' write check)": (
        ("eks:DescribeCluster",), "tools/preview_access.py: `aws eks describe-cluster`; `aws eks get-token` "
                                  "presigns sts:GetCallerIdentity, which needs no permission"),
}

# What the deploy role does with each resource type the program registers: create, read, update, delete, tag.
# A resource type the program registers and this table lacks stops the generator with the type named.
RESOURCE_ACTIONS: dict[str, tuple[str, ...]] = {
    "aws:cloudwatch/eventRule:EventRule": (
        "events:PutRule", "events:DescribeRule", "events:DeleteRule", "events:EnableRule", "events:DisableRule",
        "events:ListTargetsByRule", "events:ListTagsForResource", "events:TagResource", "events:UntagResource"),
    "aws:cloudwatch/eventTarget:EventTarget": (
        "events:PutTargets", "events:RemoveTargets", "events:ListTargetsByRule"),
    "aws:cloudwatch/logGroup:LogGroup": (
        "logs:CreateLogGroup", "logs:DeleteLogGroup", "logs:DescribeLogGroups", "logs:PutRetentionPolicy",
        "logs:DeleteRetentionPolicy", "logs:AssociateKmsKey", "logs:DisassociateKmsKey", "logs:ListTagsForResource",
        "logs:TagResource", "logs:UntagResource"),
    "aws:ebs/fastSnapshotRestore:FastSnapshotRestore": (
        "ec2:EnableFastSnapshotRestores", "ec2:DisableFastSnapshotRestores", "ec2:DescribeFastSnapshotRestores"),
    "aws:ec2/eip:Eip": ("ec2:AllocateAddress", "ec2:ReleaseAddress", "ec2:DescribeAddresses",
                        "ec2:DescribeAddressesAttribute", "ec2:CreateTags", "ec2:DeleteTags"),
    "aws:ec2/internetGateway:InternetGateway": (
        "ec2:CreateInternetGateway", "ec2:AttachInternetGateway", "ec2:DetachInternetGateway",
        "ec2:DeleteInternetGateway", "ec2:DescribeInternetGateways", "ec2:CreateTags", "ec2:DeleteTags"),
    "aws:ec2/launchTemplate:LaunchTemplate": (
        "ec2:CreateLaunchTemplate", "ec2:CreateLaunchTemplateVersion", "ec2:ModifyLaunchTemplate",
        "ec2:DeleteLaunchTemplate", "ec2:DescribeLaunchTemplates", "ec2:DescribeLaunchTemplateVersions",
        "ec2:CreateTags", "ec2:DeleteTags"),
    "aws:ec2/natGateway:NatGateway": ("ec2:CreateNatGateway", "ec2:DeleteNatGateway", "ec2:DescribeNatGateways",
                                      "ec2:CreateTags", "ec2:DeleteTags"),
    "aws:ec2/routeTable:RouteTable": ("ec2:CreateRouteTable", "ec2:DeleteRouteTable", "ec2:DescribeRouteTables",
                                      "ec2:CreateRoute", "ec2:ReplaceRoute", "ec2:DeleteRoute", "ec2:CreateTags",
                                      "ec2:DeleteTags"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": (
        "ec2:AssociateRouteTable", "ec2:DisassociateRouteTable", "ec2:ReplaceRouteTableAssociation",
        "ec2:DescribeRouteTables"),
    "aws:ec2/subnet:Subnet": ("ec2:CreateSubnet", "ec2:DeleteSubnet", "ec2:DescribeSubnets",
                              "ec2:ModifySubnetAttribute", "ec2:CreateTags", "ec2:DeleteTags"),
    "aws:ec2/tag:Tag": ("ec2:CreateTags", "ec2:DeleteTags", "ec2:DescribeTags"),
    "aws:ec2/vpc:Vpc": ("ec2:CreateVpc", "ec2:DeleteVpc", "ec2:DescribeVpcs", "ec2:DescribeVpcAttribute",
                        "ec2:ModifyVpcAttribute", "ec2:DescribeNetworkAcls", "ec2:DescribeSecurityGroups",
                        "ec2:DescribeRouteTables", "ec2:CreateTags", "ec2:DeleteTags"),
    "aws:eks/accessEntry:AccessEntry": ("eks:CreateAccessEntry", "eks:DescribeAccessEntry", "eks:UpdateAccessEntry",
                                        "eks:DeleteAccessEntry", "eks:ListAccessEntries", "eks:TagResource",
                                        "eks:UntagResource"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": (
        "eks:AssociateAccessPolicy", "eks:DisassociateAccessPolicy", "eks:ListAssociatedAccessPolicies"),
    "aws:eks/addon:Addon": ("eks:CreateAddon", "eks:DescribeAddon", "eks:UpdateAddon", "eks:DeleteAddon",
                            "eks:DescribeAddonVersions", "eks:DescribeAddonConfiguration", "eks:TagResource",
                            "eks:UntagResource"),
    # Envelope encryption of Secrets with the program's key: the creator needs kms:DescribeKey and kms:CreateGrant
    # (https://docs.aws.amazon.com/eks/latest/userguide/enable-kms.html); the cluster role is passed to EKS.
    "aws:eks/cluster:Cluster": ("eks:CreateCluster", "eks:DescribeCluster", "eks:UpdateClusterConfig",
                                "eks:UpdateClusterVersion", "eks:DeleteCluster", "eks:DescribeUpdate",
                                "eks:ListUpdates", "eks:TagResource", "eks:UntagResource", "kms:DescribeKey",
                                "kms:CreateGrant", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups",
                                "iam:PassRole"),
    "aws:eks/nodeGroup:NodeGroup": ("eks:CreateNodegroup", "eks:DescribeNodegroup", "eks:UpdateNodegroupConfig",
                                    "eks:UpdateNodegroupVersion", "eks:DeleteNodegroup", "eks:DescribeUpdate",
                                    "eks:TagResource", "eks:UntagResource", "ec2:DescribeLaunchTemplateVersions",
                                    "iam:PassRole"),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": (
        "eks:CreatePodIdentityAssociation", "eks:DescribePodIdentityAssociation", "eks:UpdatePodIdentityAssociation",
        "eks:DeletePodIdentityAssociation", "eks:TagResource", "eks:UntagResource", "iam:PassRole"),
    "aws:iam/instanceProfile:InstanceProfile": (
        "iam:CreateInstanceProfile", "iam:GetInstanceProfile", "iam:DeleteInstanceProfile",
        "iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:TagInstanceProfile",
        "iam:UntagInstanceProfile", "iam:PassRole"),
    "aws:iam/policy:Policy": ("iam:CreatePolicy", "iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyVersions",
                              "iam:CreatePolicyVersion", "iam:DeletePolicyVersion", "iam:DeletePolicy",
                              "iam:TagPolicy", "iam:UntagPolicy"),
    "aws:iam/role:Role": ("iam:CreateRole", "iam:GetRole", "iam:UpdateRole", "iam:UpdateAssumeRolePolicy",
                          "iam:DeleteRole", "iam:TagRole", "iam:UntagRole", "iam:ListRolePolicies",
                          "iam:ListAttachedRolePolicies", "iam:ListInstanceProfilesForRole"),
    "aws:iam/rolePolicy:RolePolicy": ("iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ("iam:AttachRolePolicy", "iam:DetachRolePolicy",
                                                          "iam:ListAttachedRolePolicies"),
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": ("iam:CreateServiceLinkedRole", "iam:GetRole",
                                                    "iam:DeleteServiceLinkedRole",
                                                    "iam:GetServiceLinkedRoleDeletionStatus"),
    "aws:kms/alias:Alias": ("kms:CreateAlias", "kms:DeleteAlias", "kms:UpdateAlias", "kms:ListAliases"),
    "aws:kms/key:Key": ("kms:CreateKey", "kms:DescribeKey", "kms:GetKeyPolicy", "kms:PutKeyPolicy",
                        "kms:GetKeyRotationStatus", "kms:EnableKeyRotation", "kms:DisableKeyRotation",
                        "kms:UpdateKeyDescription", "kms:ListResourceTags", "kms:TagResource", "kms:UntagResource",
                        "kms:ScheduleKeyDeletion"),
    "aws:sqs/queue:Queue": ("sqs:CreateQueue", "sqs:GetQueueAttributes", "sqs:SetQueueAttributes", "sqs:GetQueueUrl",
                            "sqs:DeleteQueue", "sqs:ListQueueTags", "sqs:TagQueue", "sqs:UntagQueue"),
    "aws:sqs/queuePolicy:QueuePolicy": ("sqs:SetQueueAttributes", "sqs:GetQueueAttributes"),
}

# Services whose roles the deploy role passes (iam:PassedToService): EKS for the cluster role, EC2 for the node
# role (managed node groups and the instance profile), EKS Pod Identity for the pod roles.
# Source: https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_use_passrole.html
PASSED_TO = ("eks.amazonaws.com", "ec2.amazonaws.com", "pods.eks.amazonaws.com")

# Reads of data, denied to the preview role whatever a managed policy allows (an explicit Deny wins:
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
# Each returns the content of a resource, not its configuration.
DATA_READS: tuple[str, ...] = (
    "s3:GetObject*",                      # object bytes, versions, attributes, ACLs, tags of objects
    "secretsmanager:GetSecretValue", "secretsmanager:BatchGetSecretValue",
    "kms:Decrypt", "kms:ReEncryptFrom", "kms:GenerateDataKey*",
    "sqs:ReceiveMessage",
    "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:PartiQLSelect",
    "dynamodb:GetRecords",
    "kinesis:GetRecords", "kinesis:SubscribeToShard",
    "logs:GetLogEvents", "logs:FilterLogEvents", "logs:StartQuery", "logs:GetQueryResults", "logs:StartLiveTail",
    "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer",
    "lambda:GetFunction",                 # its Code.Location is a download URL of the function's code
    "ec2:GetPasswordData", "ec2:GetConsoleOutput", "ec2:GetConsoleScreenshot",
    "ec2:DescribeInstanceAttribute",      # userData
    "ec2:GetLaunchTemplateData",          # userData
    "ec2:DescribeLaunchTemplateVersions", # userData
    "athena:GetQueryResults",
    "rds:DownloadDBLogFilePortion", "rds-data:ExecuteStatement",
    "ssm:GetDocument",                    # documents may embed secrets
    "codecommit:GetFile", "codecommit:GetBlob",
    # Reads whose answers carry customer data although they look like metadata (issue 54: all were allowed by
    # ViewOnlyAccess v46, https://docs.aws.amazon.com/aws-managed-policy/latest/reference/ViewOnlyAccess.html):
    "lambda:ListFunctions", "lambda:GetFunctionConfiguration", "lambda:ListVersionsByFunction",  # environment variables
    "ecs:DescribeTaskDefinition", "ecs:DescribeTasks",  # container environment variables and overrides
    "autoscaling:DescribeLaunchConfigurations",  # UserData
    "ec2:DescribeSpotInstanceRequests", "ec2:DescribeSpotFleetRequests",  # launch specifications' UserData
    "cloudformation:DescribeStacks", "cloudformation:GetTemplate",  # parameters and outputs; the template
    "cloudtrail:LookupEvents",  # request parameters of every API call in the account
    "cognito-idp:ListUsers", "cognito-idp:ListUsersInGroup", "cognito-idp:AdminGetUser",  # personal data
    "sns:GetSubscriptionAttributes", "sns:ListSubscriptions", "sns:ListSubscriptionsByTopic",  # endpoints: emails,
    # phone numbers, URLs with tokens
    "sagemaker:DescribeEndpointConfig", "sagemaker:DescribeTrainingJob", "sagemaker:DescribeProcessingJob",
    "sagemaker:DescribeTransformJob", "sagemaker:DescribeModel",  # environment variables
    "lex:GetUtterancesView",  # what users said to a bot
)

# The account's own SSM parameters (configuration the account stores, SecureStrings included) are data; the public
# parameters AWS and Canonical publish (no account field) are not.
# Source: https://docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-public-parameters.html
SSM_PARAMETER_READS = ("ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath",
                       "ssm:GetParameterHistory")

# AWS managed policies the preview role carries besides the generated one: none. ViewOnlyAccess
# (https://docs.aws.amazon.com/aws-managed-policy/latest/reference/ViewOnlyAccess.html) allows List/Describe/Get in
# every service, and some of those answers are customer data (the denies above name the ones known): a role that
# allows only the calls the program's preview makes cannot read what nobody listed (issue 54).
PREVIEW_MANAGED_POLICIES: tuple[str, ...] = ()
