"""tools.ci_comment: the mandatory violations of a failed `pulumi preview`, as a pull-request comment."""

from __future__ import annotations

from tools.ci_comment import Violation, comment, main, mandatory_violations

# The CLI's policy section (its layout as pulumi prints it), with colour codes as a terminal run leaves them.
LOG = """\
Previewing update (prod)

     Type                              Name                 Plan
 +   pulumi:pulumi:Stack               gpu-platform-prod    create
 +   ├─ aws:eks:NodeGroup              gpu                  create

Policies:
    \x1b[31m❌ gpu-guard@v0.1.0 (local: policies)\x1b[0m
        - [mandatory]  gpu-driver-image-published  (aws:eks/nodeGroup:NodeGroup: gpu)
          nvcr.io/nvidia/driver:535.15.04-ubuntu22.04 is not published: ImagePullBackOff.
          Pin 535.309.01.
        - [advisory]  alb-waf-attached  (kubernetes:networking.k8s.io/v1:Ingress: api)
          An internet-facing ALB Ingress has no WAFv2 web ACL.
        - [mandatory]  imdsv2-required  (aws:ec2/launchTemplate:LaunchTemplate: gpu-lt)
          httpTokens is optional; set required.

Resources:
    + 2 to create

error: preview failed
"""


def test_only_the_mandatory_violations_are_taken_with_their_whole_message():
    assert mandatory_violations(LOG) == [
        Violation("gpu-driver-image-published", "aws:eks/nodeGroup:NodeGroup: gpu",
                  "nvcr.io/nvidia/driver:535.15.04-ubuntu22.04 is not published: ImagePullBackOff. Pin 535.309.01."),
        Violation("imdsv2-required", "aws:ec2/launchTemplate:LaunchTemplate: gpu-lt",
                  "httpTokens is optional; set required."),
    ]


def test_the_comment_lists_them_and_links_the_run():
    text = comment("prod", LOG, "https://github.com/o/r/actions/runs/7")
    assert text.startswith("### `pulumi preview` of `prod` failed ([job log](https://github.com/o/r/actions/runs/7))")
    assert "2 mandatory policy violation(s)" in text
    assert "- **`imdsv2-required`** on `aws:ec2/launchTemplate:LaunchTemplate: gpu-lt`: httpTokens" in text
    assert "alb-waf-attached" not in text


def test_a_failure_without_a_violation_says_so(tmp_path, capsys, monkeypatch):
    log = tmp_path / "preview.log"
    log.write_text("error: could not connect to the Kubernetes API\n")
    monkeypatch.setenv("GITHUB_RUN_ID", "9")
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    assert main(["--stack", "dev", str(log)]) == 0
    out = capsys.readouterr().out
    assert "No mandatory policy violation" in out and "https://github.com/o/r/actions/runs/9" in out
    assert main(["--stack", "dev", str(tmp_path / "absent.log")]) == 2
