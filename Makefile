# gpu-platform: the two commands that work on a fresh clone are `make preview` and `make test`.
# Everything runs from a local virtualenv (.venv): `make preview` installs the runtime (requirements.txt) only,
# `make test` adds the development tools (requirements-dev.txt). Both install the `gpu-platform` command
# (.venv/bin/gpu-platform: preview, gate, matrix, upstream, ...), which the docs use for every other command.
# What installs writes to stderr (and make echoes no command there), so `make preview-json > f.json` is JSON.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Written after a successful install; newer than its requirements files = nothing to install.
STAMP := $(VENV)/.requirements-installed
RUNTIME_STAMP := $(VENV)/.runtime-installed
# The project's command (tools/cli.py through the launcher tools/bin/gpu-platform), from any working folder.
GPU_PLATFORM := $(VENV)/bin/gpu-platform
# pip install with progress of ours (tools/install.py: a count as pip collects, then the install step, the time;
# pip's own output goes to .venv/pip-install.log, its tail printed when it fails). A first install takes a minute.
PIP_INSTALL = $(PY) tools/install.py
STACK ?= dev
PHASE ?= preview
PYTEST_ARGS ?=
# `make preview TODAY=YYYY-MM-DD` judges lifecycles at that date; `OUT=DIR` also writes the artefacts there.
OUT ?=
# The stack's own policy config, passed only when it exists (the CLI reads one only when named).
# tools/ci_gate.py (`make gate`) builds the same command line for every stack; tests/ci checks both agree.
POLICY_CONFIG := $(wildcard policies/config/$(STACK).json)
PREVIEW_ARGS = --stack $(STACK) --phase $(PHASE) $(if $(TODAY),--today $(TODAY)) \
	$(if $(POLICY_CONFIG),--policy-config $(POLICY_CONFIG)) $(if $(OUT),--out $(OUT)) $(if $(VERBOSE),--verbose)
# The date the offline gate (`make gate`, the pull-request and deploy workflows) judges lifecycles at, so a
# pull request's result does not change with the calendar. `make gate TODAY=` judges at the real date (the
# weekly calendar workflow does). Move it forward on purpose, in its own commit.
GATE_TODAY := 2026-11-30

.DEFAULT_GOAL := help
.PHONY: help venv program-venv upstream upstream-if-reachable pack-venv preview preview-json gate lint test mutants bench clean
.PHONY: mutants-chunks mutants-pack mutants-merge
.PHONY: test-calendar test-fresh-clone e2e e2e-cleanup e2e-sweep e2e-run-id

help:
	@echo "make preview        offline preview of the dev stack (STACK=prod for prod): no cloud account, no Pulumi CLI"
	@echo "                    exit 0: nothing blocks; a failure shows the preview's own status as make's 'Error 1'"
	@echo "                    (a mandatory finding) or 'Error 2' (stack file refused); $(GPU_PLATFORM) preview exits with it"
	@echo "make preview-json   the same as one JSON document on stdout (everything else on stderr)"
	@echo "make test           lint (ruff, mypy) and the test suite (pytest, parallel when pytest-xdist is present)"
	@echo "make gate           the offline gate of CI: every stack, lifecycles judged at GATE_TODAY (TODAY= for the real date)"
	@echo "make lint           ruff check and mypy only"
	@echo "make test-calendar  make test with the clock a year ahead (libfaketime from requirements-dev.txt; CALENDAR_DATE=)"
	@echo "make test-fresh-clone  make test on a copy of the checkout with no upstream cache, no ../shared, no network"
	@echo "make venv           create .venv with requirements.txt and requirements-dev.txt (what make test uses)"
	@echo "make program-venv   create .venv with requirements.txt only: what make preview and pulumi preview/up run,"
	@echo "                    and the command $(GPU_PLATFORM) (COMMAND --help for each)"
	@echo "make upstream       fill .upstream-cache/ with the files upstream.lock.json pins (sha256-checked); the tests"
	@echo "                    read them there (from \$$GPU_PLATFORM_SHARED or ../shared when present, else downloaded)"
	@echo "make pack-venv      create policies/venv, the policy pack's own virtualenv (Python 3.10+), as the CLI expects"
	@echo "                    (PHASE=update|up for the other engine moments of make preview)"
	@echo "make mutants        mutation testing of the rule core with mutmut (on demand, not in CI; CPU-heavy)"
	@echo "                    in chunks: make mutants-chunks CHUNKS=N, make mutants-pack PACK=F, make mutants-merge FROM='F ...'"
	@echo "make e2e MAX_USD=N the end-to-end proof in your AWS account: up, probe, one request, sleep and wake, image roll,"
	@echo "                    destroy and a tag sweep, refused above MAX_USD (docs/e2e.md; needs an account and the Pulumi CLI)"
	@echo "make bench          preview + gate wall time and memory against the import floor and checkov: bench/results.md"

$(PY):
	@echo "== creating $(VENV) ($(PYTHON) -m venv)" >&2
	@$(PYTHON) -m venv $(VENV) >&2

$(STAMP): requirements.txt requirements-dev.txt requirements-e2e.txt $(RUNTIME_STAMP) | $(PY)
	@echo "== installing the development tools into $(VENV) (requirements-dev.txt: pytest, mypy, ruff, hypothesis, mutmut, zizmor, ...; about 300 MB more)" >&2
	@$(PIP_INSTALL) -r requirements-dev.txt >&2
	@touch $(STAMP)

venv: $(STAMP) $(GPU_PLATFORM)

# The Pulumi program's runtime only (requirements.txt): what `pulumi preview` / `pulumi up` need in .venv
# (Pulumi.yaml `virtualenv: .venv`). The cloud jobs install this, not the development tools.
$(RUNTIME_STAMP): requirements.txt | $(PY)
	@echo "== installing the runtime into $(VENV) (requirements.txt: the Pulumi SDKs, pulumi-policy, pydantic, ...; about 450 MB, a minute or two the first time)" >&2
	@$(PIP_INSTALL) -r requirements.txt >&2
	@touch $(RUNTIME_STAMP)

# The launcher finds the checkout as the folder above its virtualenv; @CHECKOUT@ is the fallback for a VENV elsewhere.
$(GPU_PLATFORM): tools/bin/gpu-platform $(RUNTIME_STAMP)
	@sed 's|@CHECKOUT@|$(CURDIR)|' tools/bin/gpu-platform > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

program-venv: $(RUNTIME_STAMP) $(GPU_PLATFORM)

# The upstream reference data (CRDs, chart values, IAM policies, NVIDIA docs) the tests and
# `tools.matrix refresh` read: copied from $$GPU_PLATFORM_SHARED/upstream (default ../shared/upstream) when
# that exists, else downloaded from the commits upstream.lock.json pins; every file sha256-checked.
# GPU_PLATFORM_UPSTREAM_CACHE moves the cache, GPU_PLATFORM_UPSTREAM_URL the download base.
# Quiet when it works (one summary line); offline, at most five lines on stderr naming both ways out.
upstream: $(GPU_PLATFORM)
	@$(GPU_PLATFORM) upstream fill

# The first step of `make test` and `make preview`: the same verified fill (runtime venv only: tools/upstream is
# standard library), but where nothing answers it says so in one line and the command runs on without the cache
# (tests that need it skip with the reason, the preview names what it did not check). Wrong bytes still fail.
# Its summary goes to stderr, so the command after it owns stdout (make preview-json).
upstream-if-reachable: $(GPU_PLATFORM)
	@$(GPU_PLATFORM) upstream fill --if-reachable --timeout 10 >&2

# checkov, the scanner tests/security/test_checkov.py runs over the rendered manifests, in a virtualenv of its own:
# checkov 3.3.30 needs packaging<24, the Pulumi SDK packaging>=26 (requirements-scan.txt). The tests find it
# through $$CHECKOV (`make test` sets it when .scan-venv exists) or on PATH; under CI=true a missing one fails.
SCAN_VENV := .scan-venv
SCAN_STAMP := $(SCAN_VENV)/.requirements-installed
$(SCAN_STAMP): requirements-scan.txt
	$(PYTHON) -m venv $(SCAN_VENV)
	$(SCAN_VENV)/bin/python -m pip install --disable-pip-version-check --quiet -r requirements-scan.txt
	@touch $(SCAN_STAMP)

scan-venv: $(SCAN_STAMP)

# The offline preview needs the runtime only (tools/, components/, policies/ import nothing of requirements-dev.txt).
# GNU make ends 2 whenever a command fails; it names the preview's own status as `Error 1` (a mandatory finding)
# or `Error 2` (the stack file or command line was refused). `$(GPU_PLATFORM) preview ...` exits with it directly.
preview: $(GPU_PLATFORM) upstream-if-reachable
	@echo "== offline preview of stack $(STACK), phase $(PHASE) (no AWS account, no Pulumi CLI)"
	$(GPU_PLATFORM) preview $(PREVIEW_ARGS)

# Only the JSON document on stdout: every recipe before it writes to stderr, and no command is echoed (@).
preview-json: $(GPU_PLATFORM) upstream-if-reachable
	@$(GPU_PLATFORM) preview $(PREVIEW_ARGS) --json

# Every stack, as CI runs it (the upstream cache first: the API server checks read its CRDs and chart values.yaml):
# out/<stack>/ artefacts, each summary appended to $$GITHUB_STEP_SUMMARY when set,
# exit 1 on a mandatory violation, 2 on a rejected stack. The runtime only; the cache must fill under CI=true
# (the API-server checks are part of the verdict there); elsewhere, offline, it runs on and says what it did not check.
gate: TODAY ?= $(GATE_TODAY)
gate: $(GPU_PLATFORM) $(if $(CI),upstream,upstream-if-reachable)
	$(GPU_PLATFORM) gate --today "$(TODAY)" --out $(or $(OUT),out)

# `pulumi preview --policy-pack policies` runs a local Python pack with policies/venv (PulumiPolicy.yaml
# `virtualenv: venv`) but does not create it; `pulumi install` in policies/ does. This target does the
# same without the CLI. The pack needs Python 3.10 or newer (pulumi-policy's floor).
PACK_VENV := policies/venv
$(PACK_VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "the policy pack needs Python 3.10+; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(PACK_VENV)

pack-venv: $(PACK_VENV)/bin/python
	@if command -v pulumi >/dev/null 2>&1; then cd policies && pulumi install; \
	else $(PACK_VENV)/bin/python -m pip install --disable-pip-version-check --quiet -r policies/requirements.txt; fi

lint: $(STAMP)
	@echo "== ruff check . (seconds)"
	$(PY) -m ruff check .
	@echo "== mypy . (the first run type-checks the Pulumi SDKs too and prints nothing for 1-2 minutes; later runs use .mypy_cache)"
	$(PY) -m mypy .

# pytest exit 5 means "no tests collected". That is a failure here (a suite that runs nothing proves
# nothing), unless the repository really has no test files.
test: lint upstream-if-reachable
	@xdist=""; if $(PY) -c "import xdist" 2>/dev/null; then xdist="-n auto"; fi; \
	if [ -z "$$CHECKOV" ] && [ -x $(SCAN_VENV)/bin/checkov ]; then export CHECKOV=$$PWD/$(SCAN_VENV)/bin/checkov; fi; \
	echo "== pytest $$xdist $(PYTEST_ARGS) (about 7,100 tests: about 17 minutes on 2 cores; a skip summary ends it)"; \
	status=0; $(PY) -m pytest $$xdist $(PYTEST_ARGS) || status=$$?; \
	if [ $$status -eq 5 ]; then \
	  if [ -n "$$(find tests -name 'test_*.py' -print -quit 2>/dev/null)" ]; then \
	    echo "make test: pytest collected no tests although tests/ has test files; failing" >&2; exit 5; \
	  fi; \
	  echo "make test: the repository has no test files yet; nothing to run"; exit 0; \
	fi; \
	exit $$status

# Mutation testing ([tool.mutmut] in pyproject.toml): every mutant of the rule core against the rule-level
# tests, at the lowest CPU priority. MUTANTS narrows it to mutant names (e.g. "policies.gpu_guard.versions*");
# MUTANT_JOBS sets the parallel workers. The tests read the upstream cache through GPU_PLATFORM_UPSTREAM_CACHE
# (they run inside mutants/). The score per path: tests/mutation_score.py.
# In chunks (docs/testing.md): `make mutants-chunks CHUNKS=4` prints 4 MUTANTS= lists of the unchecked mutants;
# each runs elsewhere as `make mutants MUTANTS='...' MUTANT_JOBS=16 && make mutants-pack PACK=chunk1.tgz`;
# `make mutants-merge FROM='chunk1.tgz chunk2.tgz ...'` folds them into mutants/ here and prints the score.
MUTANT_JOBS ?= 1
MUTANTS ?=
CHUNKS ?= 4
PACK ?= mutants-results.tgz
FROM ?=
mutants: $(STAMP)
	GPU_PLATFORM_UPSTREAM_CACHE=$${GPU_PLATFORM_UPSTREAM_CACHE:-$(abspath .upstream-cache)} nice -n 19 $(VENV)/bin/mutmut run --max-children $(MUTANT_JOBS) $(MUTANTS)
	$(PY) -m tests.mutation_score

mutants-chunks:
	@$(PY) -m tests.mutation_score chunks $(CHUNKS)

mutants-pack:
	$(PY) -m tests.mutation_score pack $(PACK)

mutants-merge:
	@test -n "$(FROM)" || { echo "make mutants-merge: FROM='chunk1.tgz chunk2.tgz ...' (archives of make mutants-pack, or folders holding mutants/)" >&2; exit 2; }
	$(PY) -m tests.mutation_score merge $(FROM)

# The calendar-proof run: `make test` with the wall clock a year ahead (CALENDAR_DATE=YYYY-MM-DD: from that day,
# 12:00), under the prebuilt libfaketime of the pinned `libfaketime` package (tools/calendar_run.py probes it
# first: the date moved, time.sleep still sleeps). The weekly calendar workflow runs it; so a check that holds only
# until some day turns red a year before that day.
# The front door, whole: `make test` on a fresh copy of the checkout with no upstream cache, no ../shared and
# downloads pointed at a closed port (tools/fresh_clone.py); green means every test passed or skipped for the cache.
# tests/test_front_door.py runs `make preview` and the tests that read the cache that way in every `make test`.
test-fresh-clone: $(STAMP)
	$(PY) -m tools.fresh_clone test

CALENDAR_DATE ?=
test-calendar: $(STAMP)
	$(PY) -m tools.calendar_run $(if $(CALENDAR_DATE),--date $(CALENDAR_DATE)) -- $(MAKE) --no-print-directory test

# bench/preview.py: median of BENCH_RUNS fresh processes per stack (dev, prod, generated stacks), the import
# floor and checkov (from .scan-venv, `make scan-venv`, else PATH); writes bench/results.md. Minutes of CPU: run it on a quiet machine.
BENCH_RUNS ?= 5
BENCH_ARGS ?=
bench: $(STAMP)
	$(PY) bench/preview.py --runs $(BENCH_RUNS) $(BENCH_ARGS)

# The end-to-end proof in a real AWS account (docs/e2e.md): `make e2e MAX_USD=25`. It first says everything it
# needs and lacks (credentials, region, Pulumi CLI and backend, MAX_USD, ...) and stops there having created
# nothing; then the pack's venv, then the run (tools/e2e). requirements-e2e.txt adds boto3 to the runtime.
E2E_STAMP := $(VENV)/.e2e-installed
$(E2E_STAMP): requirements-e2e.txt $(RUNTIME_STAMP) | $(PY)
	$(PIP_INSTALL) -r requirements-e2e.txt
	@touch $(E2E_STAMP)

e2e: $(E2E_STAMP)
	MAX_USD="$(MAX_USD)" $(PY) -m tools.e2e check
	$(MAKE) pack-venv
	MAX_USD="$(MAX_USD)" $(PY) -m tools.e2e run

# A new run id (standard library only: the workflow's first step, before any virtualenv); RUN_SUFFIX= its suffix.
RUN_SUFFIX ?=
e2e-run-id:
	@$(PYTHON) -m tools.e2e new-id $(if $(RUN_SUFFIX),--suffix "$(RUN_SUFFIX)")

# What a run left when its own cleanup could not run (the e2e workflow's always() job): E2E_RUN_ID=e2e-... ;
# and the scheduled sweep of every run older than E2E_TTL_HOURS.
E2E_TTL_HOURS ?= 12
e2e-cleanup: $(E2E_STAMP)
	$(PY) -m tools.e2e cleanup

e2e-sweep: $(E2E_STAMP)
	$(PY) -m tools.e2e sweep --older-than-hours $(E2E_TTL_HOURS)

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache $(PACK_VENV) mutants
