#!/usr/bin/env python3
"""deploy/kubernetes/*.yaml checked offline. Usage: check_kubernetes_manifests.py [REPO_ROOT]

1. Schemas. Every built-in object against the Kubernetes API schemas of KUBERNETES_VERSION with
   PyPI's kubernetes-validate (it ships the schemas; strict: an unknown field is an error, as
   kubectl's default server-side field validation makes it). The MPIJob against the MPI
   Operator's CRD schema (tests/fixtures/kubernetes/mpijob-v2beta1.schema.json: its source, trimmed
   by trim_mpijob_crd.py, read as closed: unknown fields refused), the enums its types.go
   declares, and each replica's pod template as core/v1 PodTemplateSpec with kubernetes-validate.
2. The project's rules: every pod that runs GPU work asks nvidia.com/gpu, has /dev/shm as a
   memory-backed emptyDir with a size limit and tolerates nvidia.com/gpu:NoSchedule; no container
   is privileged or may escalate, each drops ALL capabilities (sshd's few, in MPIJob workers only,
   added back); Jobs do not retry and have a deadline covering their budget; the fleet Job puts
   one pod per node; the MPIJob's numbers agree; no RBAC rule can cordon, drain, evict or delete.
3. The fleet pod's verdict script run against sample node cards with a stand-in gpubench:
   PASS, WARN and FAIL, and its verdict file a valid Node label patch.
4. Negative checks: mutated copies (in memory) of the manifests must each be refused, naming why:
   the checks above assert something.
Exits 77 (ctest's SKIP_RETURN_CODE) when kubernetes-validate, jsonschema or PyYAML is missing,
saying how to install them (scripts/lib.sh ensure_py_venv makes build/py-venv); 1 on a failure."""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

KUBERNETES_VERSION = "1.31.0"
SKIP = 77
ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))

try:
    import jsonschema
    import kubernetes_validate
    import yaml
except ImportError as e:
    venv_python = os.path.join(ROOT, "build", "py-venv", "bin", "python3")
    if os.path.exists(venv_python) and not os.environ.get("GPUBENCH_IN_PY_VENV"):
        os.environ["GPUBENCH_IN_PY_VENV"] = "1"  # once: the venv's interpreter has them or we skip
        os.execv(venv_python, [venv_python, os.path.abspath(__file__), *sys.argv[1:]])
    print(f"SKIP kubernetes_manifests: Python module {e.name} is missing (scripts/lib.sh ensure_py_venv installs "
          "kubernetes-validate and jsonschema into build/py-venv; scripts/test.sh calls it)")
    sys.exit(SKIP)

DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "kubernetes")
# sshd as root in the MPI Operator's workers: privilege separation and port 22 (collectives-mpijob.yaml).
SSHD_CAPABILITIES = {"SETUID", "SETGID", "SYS_CHROOT", "NET_BIND_SERVICE", "AUDIT_WRITE"}
# Enums kubeflow/mpi-operator declares in pkg/apis/kubeflow/v2beta1/types.go that its CRD lacks
# (launcherCreationPolicy's marker is written "Enum:" and controller-gen skips it) or leaves open.
MPIJOB_ENUMS = {
    ("spec", "launcherCreationPolicy"): {"AtStartup", "WaitForWorkersReady"},
    ("spec", "runPolicy", "cleanPodPolicy"): {"All", "Running", "None"},
}
MPIJOB_REPLICA_TYPES = {"Launcher", "Worker"}
# Every RBAC verb or resource that could take a node out of service or move its pods.
FORBIDDEN_NODE_VERBS = {"update", "delete", "deletecollection", "create", "*"}
FORBIDDEN_RESOURCES = {"pods/eviction", "nodes/status", "*", "pods"}


def load_manifests():
    docs = {}
    for name in sorted(os.listdir(DEPLOY)):
        if name.endswith(".yaml"):
            with open(os.path.join(DEPLOY, name)) as f:
                docs[name] = [d for d in yaml.safe_load_all(f) if d is not None]
    return docs


def budget_seconds(text):
    m = re.fullmatch(r"(\d+)([smh]?)", text)
    if not m:
        raise ValueError(f"budget {text!r}")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


# --- 1. schemas ------------------------------------------------------------------------------------

def closed(schema):
    """The CRD schema with every object that lists its properties closed to others (what the API
    server prunes, kubectl's strict field validation refuses)."""
    if isinstance(schema, dict):
        out = {k: closed(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [closed(v) for v in schema]
    return schema


def mpijob_schema():
    with open(os.path.join(FIXTURES, "mpijob-v2beta1.schema.json")) as f:
        return closed(json.load(f))


def validate_pod_template(where, template, errors):
    wrapper = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "check"}, "template": template}
    try:
        kubernetes_validate.validate(wrapper, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as e:
        errors.append(f"{where}: pod template: {'.'.join(str(p) for p in e.path)}: {e.message}")


def check_schemas(docs, errors):
    crd = mpijob_schema()
    for name, objs in docs.items():
        for i, obj in enumerate(objs):
            where = f"{name}[{i}] {obj.get('kind')}/{obj.get('metadata', {}).get('name')}"
            if obj.get("apiVersion", "").startswith("kubeflow.org/"):
                if obj.get("apiVersion") != "kubeflow.org/v2beta1" or obj.get("kind") != "MPIJob":
                    errors.append(f"{where}: only kubeflow.org/v2beta1 MPIJob is known here")
                    continue
                for e in jsonschema.Draft7Validator(crd).iter_errors(obj):
                    errors.append(f"{where}: MPIJob CRD schema: {'.'.join(str(p) for p in e.path)}: {e.message}")
                for path, allowed in MPIJOB_ENUMS.items():
                    node = obj
                    for key in path:
                        node = node.get(key) if isinstance(node, dict) else None
                    if node is not None and node not in allowed:
                        errors.append(f"{where}: {'.'.join(path)}: {node!r} is not one of {sorted(allowed)} (types.go)")
                for rtype, spec in obj.get("spec", {}).get("mpiReplicaSpecs", {}).items():
                    if rtype not in MPIJOB_REPLICA_TYPES:
                        errors.append(f"{where}: mpiReplicaSpecs.{rtype}: not one of {sorted(MPIJOB_REPLICA_TYPES)}")
                    validate_pod_template(f"{where} {rtype}", spec.get("template", {}), errors)
                continue
            try:
                kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
            except kubernetes_validate.ValidationError as e:
                errors.append(f"{where}: Kubernetes {KUBERNETES_VERSION} schema: {'.'.join(str(p) for p in e.path)}: {e.message}")
            except kubernetes_validate.SchemaNotFoundError as e:
                errors.append(f"{where}: {e.message}")


# --- 2. the project's rules -------------------------------------------------------------------------

def runs_evaluate(container):
    """Whether the container runs `gpubench evaluate`: as the image's entrypoint's arguments, or a
    line of its shell script."""
    args = container.get("args", [])
    if not container.get("command") and args[:1] == ["evaluate"]:
        return True
    lines = "\n".join(container.get("command", []) + args).splitlines()
    return any(line.strip().startswith("gpubench evaluate ") for line in lines)


def pod_specs(docs):
    """(where, pod spec, role) of every pod template: role 'gpu' where it must have the GPUs
    (it runs gpubench evaluate, or is an MPIJob worker), else 'cpu'."""
    for name, objs in docs.items():
        for obj in objs:
            kind = obj.get("kind")
            if kind == "Job":
                spec = obj["spec"]["template"]["spec"]
                yield f"{name} Job", spec, "gpu" if any(runs_evaluate(c) for c in spec.get("containers", [])) else "cpu"
            elif kind == "Pod":
                yield f"{name} Pod", obj["spec"], "cpu"
            elif kind == "MPIJob":
                for rtype, r in obj["spec"]["mpiReplicaSpecs"].items():
                    yield f"{name} MPIJob {rtype}", r["template"]["spec"], "gpu" if rtype == "Worker" else "cpu"


def gpus_asked(spec):
    return sum(int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)) for c in spec.get("containers", []))


def check_pod(where, spec, role, errors, sshd_allowed):
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(flag):
            errors.append(f"{where}: {flag}: true")
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        sc = c.get("securityContext", {})
        cw = f"{where} container {c.get('name')}"
        if sc.get("privileged") is not False:
            errors.append(f"{cw}: securityContext.privileged must be false (it is {sc.get('privileged')!r})")
        if sc.get("allowPrivilegeEscalation") is not False:
            errors.append(f"{cw}: securityContext.allowPrivilegeEscalation must be false")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []):
            errors.append(f"{cw}: capabilities must drop ALL")
        added = set(caps.get("add", []))
        if added and not (sshd_allowed and added <= SSHD_CAPABILITIES):
            errors.append(f"{cw}: capabilities added {sorted(added)}: only an MPIJob worker's sshd may add {sorted(SSHD_CAPABILITIES)}")
    tolerates = any(t.get("key") == "nvidia.com/gpu" and t.get("effect", "NoSchedule") == "NoSchedule" and
                    t.get("operator", "Equal") in ("Exists", "Equal") for t in spec.get("tolerations", []))
    shm_volumes = {m["name"] for c in spec.get("containers", []) for m in c.get("volumeMounts", []) if m.get("mountPath") == "/dev/shm"}
    shm_ok = any(v.get("name") in shm_volumes and v.get("emptyDir", {}).get("medium") == "Memory" and v["emptyDir"].get("sizeLimit")
                 for v in spec.get("volumes", []))
    if role == "gpu":
        if gpus_asked(spec) <= 0:
            errors.append(f"{where}: a GPU pod must ask resources.limits nvidia.com/gpu")
        if not shm_ok:
            errors.append(f"{where}: a GPU pod needs /dev/shm as an emptyDir with medium: Memory and a sizeLimit")
        if not tolerates:
            errors.append(f"{where}: a GPU pod must tolerate nvidia.com/gpu:NoSchedule")
    elif gpus_asked(spec) > 0:
        errors.append(f"{where}: asks nvidia.com/gpu but runs no GPU work")


def objects_of(docs, kind):
    """(manifest name, object) for every object of this kind."""
    for name, objs in docs.items():
        for obj in objs:
            if obj.get("kind") == kind:
                yield name, obj


def check_jobs(docs, errors):
    for name, obj in objects_of(docs, "Job"):
        spec, where = obj["spec"], f"{name} Job/{obj['metadata']['name']}"
        if spec.get("completionMode") == "Indexed":
            if spec.get("backoffLimitPerIndex") != 0:
                errors.append(f"{where}: an Indexed Job gives each node one try: backoffLimitPerIndex: 0")
        elif spec.get("backoffLimit") != 0:
            errors.append(f"{where}: backoffLimit must be 0 (a failed run is a finding, never silently rerun)")
        pod = spec["template"]["spec"]
        if pod.get("restartPolicy") != "Never":
            errors.append(f"{where}: restartPolicy must be Never")
        deadline = spec.get("activeDeadlineSeconds")
        if not deadline:
            errors.append(f"{where}: activeDeadlineSeconds is missing")
        for c in pod["containers"]:
            for env in c.get("env", []):
                if env["name"] == "BUDGET" and deadline and deadline < budget_seconds(env["value"]) + 600:
                    errors.append(f"{where}: activeDeadlineSeconds {deadline} leaves under 10 min past the budget {env['value']}")
        if spec.get("completionMode") == "Indexed":
            check_fleet(where, spec, errors)


def check_fleet(where, spec, errors):
    if spec.get("completions") != spec.get("parallelism"):
        errors.append(f"{where}: completions and parallelism must both be N (every node at once)")
    pod = spec["template"]["spec"]
    labels = spec["template"].get("metadata", {}).get("labels", {})
    terms = pod.get("affinity", {}).get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
    if not any(t.get("topologyKey") == "kubernetes.io/hostname" and t.get("labelSelector", {}).get("matchLabels") and
               all(labels.get(k) == v for k, v in t["labelSelector"]["matchLabels"].items()) for t in terms):
        errors.append(f"{where}: needs a required podAntiAffinity on kubernetes.io/hostname matching its own pods' labels")
    envs = {e["name"]: e for c in pod["containers"] for e in c.get("env", [])}
    if envs.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != "spec.nodeName":
        errors.append(f"{where}: NODE_NAME must come from the downward API's spec.nodeName")


def check_mpijob(docs, errors):
    for name, obj in objects_of(docs, "MPIJob"):
        spec, where = obj["spec"], f"{name} MPIJob/{obj['metadata']['name']}"
        if spec.get("launcherCreationPolicy") != "WaitForWorkersReady":
            errors.append(f"{where}: launcherCreationPolicy must be WaitForWorkersReady")
        if spec.get("runPolicy", {}).get("cleanPodPolicy") != "Running":
            errors.append(f"{where}: runPolicy.cleanPodPolicy must be Running")
        if not spec.get("sshAuthMountPath"):
            errors.append(f"{where}: sshAuthMountPath is missing")
        if spec.get("mpiImplementation") != "OpenMPI":
            errors.append(f"{where}: mpiImplementation must be OpenMPI (the image carries Open MPI)")
        reps = spec.get("mpiReplicaSpecs", {})
        worker, launcher = reps.get("Worker", {}), reps.get("Launcher", {})
        wpod, lpod = worker.get("template", {}).get("spec", {}), launcher.get("template", {}).get("spec", {})
        slots = spec.get("slotsPerWorker")
        if gpus_asked(wpod) != slots:
            errors.append(f"{where}: slotsPerWorker {slots} must equal the worker's GPUs ({gpus_asked(wpod)})")
        if launcher.get("replicas") != 1:
            errors.append(f"{where}: one launcher")
        script = " ".join(" ".join(c.get("command", []) + c.get("args", [])) for c in lpod.get("containers", []))
        m = re.search(r"mpirun\b.*?-np (\d+)", script, re.S)
        ranks = (worker.get("replicas") or 0) * (slots or 0)
        if not m or int(m.group(1)) != ranks:
            errors.append(f"{where}: the launcher's mpirun -np must be workers x slotsPerWorker = {ranks}")
        if "gpubench run --suite collectives" not in script:
            errors.append(f"{where}: the launcher must run gpubench run --suite collectives")
        wtext = " ".join(" ".join(c.get("command", []) + c.get("args", [])) for c in wpod.get("containers", []))
        if "/usr/sbin/sshd -De" not in wtext:
            errors.append(f"{where}: workers must run /usr/sbin/sshd -De (the MPI Operator reaches them over ssh)")
        for pod in (wpod, lpod):
            for c in pod.get("containers", []):
                if not c.get("image", "").endswith("-mpi"):
                    errors.append(f"{where}: container {c.get('name')}: the MPI image (gpubench:cuda13-mpi, with sshd) is needed")


def check_rbac(docs, errors):
    node_patch = False
    policies = []
    for name, objs in docs.items():
        for obj in objs:
            kind = obj.get("kind")
            if kind == "ValidatingAdmissionPolicy":
                policies.append(obj)
            if kind not in ("ClusterRole", "Role"):
                continue
            for rule in obj.get("rules", []):
                resources, verbs = set(rule.get("resources", [])), set(rule.get("verbs", []))
                where = f"{name} {kind}/{obj['metadata']['name']}"
                if resources & FORBIDDEN_RESOURCES:
                    errors.append(f"{where}: grants {sorted(resources & FORBIDDEN_RESOURCES)} (eviction, node status, pods or everything)")
                if "nodes" in resources:
                    if verbs & FORBIDDEN_NODE_VERBS or not verbs <= {"get", "patch", "list", "watch"}:
                        errors.append(f"{where}: nodes may be got and patched (labels), nothing more: {sorted(verbs)}")
                    node_patch |= "patch" in verbs
                if "*" in verbs or "*" in rule.get("apiGroups", []):
                    errors.append(f"{where}: a wildcard verb or API group")
    # RBAC cannot keep a node patch to labels: a policy must refuse spec changes (cordon: spec.unschedulable).
    if node_patch and not any(any(v.get("expression", "").strip() == "object.spec == oldObject.spec"
                                  for v in p["spec"].get("validations", [])) for p in policies):
        errors.append("RBAC grants patch on nodes but no ValidatingAdmissionPolicy keeps node specs unchanged (no cordon)")


def check_results_volume(docs, errors):
    pvcs = {o["metadata"]["name"]: o for objs in docs.values() for o in objs if o.get("kind") == "PersistentVolumeClaim"}
    for name, objs in docs.items():
        for obj in objs:
            if obj.get("kind") == "Job" and obj["spec"].get("completionMode") == "Indexed":
                for v in obj["spec"]["template"]["spec"].get("volumes", []):
                    claim = v.get("persistentVolumeClaim", {}).get("claimName")
                    if claim and "ReadWriteMany" not in pvcs.get(claim, {}).get("spec", {}).get("accessModes", []):
                        errors.append(f"{name}: the fleet's pods share {claim}: it must be a ReadWriteMany claim here")


def check_all(docs):
    errors = []
    check_schemas(docs, errors)
    for where, spec, role in pod_specs(docs):
        check_pod(where, spec, role, errors, sshd_allowed=where.endswith("MPIJob Worker"))
    check_jobs(docs, errors)
    check_mpijob(docs, errors)
    check_rbac(docs, errors)
    check_results_volume(docs, errors)
    return errors


# --- 3. the fleet pod's verdict script --------------------------------------------------------------

FAKE_GPUBENCH = """#!/bin/sh
# Stands in for `gpubench evaluate --out FILE --report md,html`: writes FILE and the card $FAKE_CARD
# as its .md, and exits $FAKE_RC.
[ "$1" = evaluate ] || exit 99
out=""
while [ $# -gt 0 ]; do [ "$1" = --out ] && out="$2"; shift; done
echo '{"benchmarks": []}' >"$out"
[ -n "$FAKE_CARD" ] && cp "$FAKE_CARD" "${out%.json}.md"
exit "$FAKE_RC"
"""


def fleet_script(docs):
    for obj in docs["fleet-indexed-job.yaml"]:
        if obj.get("kind") == "Job":
            c = obj["spec"]["template"]["spec"]["containers"][0]
            assert c["command"] == ["/bin/sh", "-c"], c["command"]
            return c["args"][0]
    raise AssertionError("fleet-indexed-job.yaml has no Job")


def run_verdict(script, card_text, rc):
    """(exit status, verdict label, verdict file text, log) of the script on a stand-in node."""
    with tempfile.TemporaryDirectory() as tmp:
        bindir, results = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
        os.makedirs(bindir)
        os.makedirs(results)
        with open(os.path.join(bindir, "gpubench"), "w") as f:
            f.write(FAKE_GPUBENCH)
        os.chmod(os.path.join(bindir, "gpubench"), 0o755)
        card = ""
        if card_text is not None:
            card = os.path.join(tmp, "card.md")
            with open(card, "w") as f:
                f.write(card_text)
        env = {"PATH": bindir + ":/usr/bin:/bin", "NODE_NAME": "gpu-node-1", "BUDGET": "30m",
               "RESULTS_DIR": results, "FAKE_CARD": card, "FAKE_RC": str(rc)}
        p = subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=60)
        path = os.path.join(results, "verdicts", "gpu-node-1.yaml")
        text = open(path).read() if os.path.exists(path) else ""
        node = yaml.safe_load(text) if text else {}
        label = (node or {}).get("metadata", {}).get("labels", {}).get("gpubench.io/verdict")
        return p.returncode, label, text, p.stdout + p.stderr, node


def check_verdicts(docs, errors):
    script = fleet_script(docs)
    cards = {n: open(os.path.join(FIXTURES, "cards", n + ".md")).read() for n in ("cpu", "h200-node", "h100-node-slow-gpu")}
    clean_gpu = cards["h200-node"].replace("0 error(s), 1 warning(s)", "0 error(s), 0 warning(s)")
    cases = [  # (what, card, evaluate's exit status, expected verdict, text its reason must hold)
        ("a clean card", cards["cpu"], 0, "PASS", None),
        ("a clean GPU card", clean_gpu, 0, "PASS", None),
        ("a doctor warning", cards["h200-node"], 0, "WARN", "doctor: 0 error(s), 1 warning(s)"),
        ("an outlier GPU", cards["h100-node-slow-gpu"], 0, "WARN", "outlier GPUs: h100-node-07 GPU 3"),
        ("a suspect case", clean_gpu.replace("0 failed, 0 suspect", "0 failed, 2 suspect"), 0, "WARN", "2 suspect"),
        ("a failed soak", clean_gpu.replace("soak: passed", "soak: failed: clocks"), 0, "WARN", "soak: failed"),
        ("evaluate exiting 1", cards["cpu"], 1, "FAIL", "exited 1"),
        ("no card", None, 0, "FAIL", "no node card"),
    ]
    for what, card, rc, want, why in cases:
        code, label, text, log, node = run_verdict(script, card, rc)
        if label != want:
            errors.append(f"verdict script, {what}: verdict {label!r}, want {want} (exit {code}; {log.strip()[-300:]})")
            continue
        if code != rc:
            errors.append(f"verdict script, {what}: exit status {code}, want evaluate's {rc}")
        if why and why not in text:
            errors.append(f"verdict script, {what}: the verdict file does not say {why!r}: {text!r}")
        if card is not None and card.splitlines()[1] not in log:
            errors.append(f"verdict script, {what}: the card is not in the pod's log")
        if set(node) != {"apiVersion", "kind", "metadata"} or set(node["metadata"]) != {"name", "labels"}:
            errors.append(f"verdict script, {what}: the verdict file must be only a Node's name and label: {node}")
        try:
            kubernetes_validate.validate(node, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            errors.append(f"verdict script, {what}: the verdict file is no valid Node: {e.message}")
    return len(cases)


# --- 4. negative checks -----------------------------------------------------------------------------

def first(docs, file, kind):
    return next(o for o in docs[file] if o.get("kind") == kind)


def pod_of(docs, file):
    return first(docs, file, "Job")["spec"]["template"]["spec"]


def mutations():
    """(what, mutate(docs), text one of the errors must hold)."""
    def setp(f):
        return f

    def privileged(d):
        pod_of(d, "evaluate-job.yaml")["containers"][0]["securityContext"]["privileged"] = True

    def escalation(d):
        del pod_of(d, "fleet-indexed-job.yaml")["containers"][0]["securityContext"]["allowPrivilegeEscalation"]

    def sys_admin(d):
        pod_of(d, "evaluate-job.yaml")["containers"][0]["securityContext"]["capabilities"]["add"] = ["SYS_ADMIN"]

    def no_shm(d):
        pod = pod_of(d, "evaluate-job.yaml")
        pod["volumes"] = [v for v in pod["volumes"] if v["name"] != "dshm"]
        pod["containers"][0]["volumeMounts"] = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] != "dshm"]

    def shm_on_disk(d):
        pod = pod_of(d, "fleet-indexed-job.yaml")
        next(v for v in pod["volumes"] if v["name"] == "dshm")["emptyDir"] = {}

    def no_toleration(d):
        pod_of(d, "fleet-indexed-job.yaml")["tolerations"] = []

    def no_gpu(d):
        del pod_of(d, "evaluate-job.yaml")["containers"][0]["resources"]["limits"]

    def worker_no_gpu(d):
        w = first(d, "collectives-mpijob.yaml", "MPIJob")["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        w["containers"][0]["resources"]["limits"].pop("nvidia.com/gpu")

    def typo_field(d):
        pod = pod_of(d, "evaluate-job.yaml")
        pod["tolerationz"] = pod.pop("tolerations")

    def wrong_type(d):
        first(d, "evaluate-job.yaml", "Job")["spec"]["backoffLimit"] = "zero"

    def retries(d):
        first(d, "evaluate-job.yaml", "Job")["spec"]["backoffLimit"] = 3

    def short_deadline(d):
        first(d, "fleet-indexed-job.yaml", "Job")["spec"]["activeDeadlineSeconds"] = 1800

    def no_anti_affinity(d):
        del pod_of(d, "fleet-indexed-job.yaml")["affinity"]

    def node_name_literal(d):
        env = pod_of(d, "fleet-indexed-job.yaml")["containers"][0]["env"]
        env[0] = {"name": "NODE_NAME", "value": "node"}

    def rwo_results(d):
        first(d, "results-pvc.yaml", "PersistentVolumeClaim")["spec"]["accessModes"] = ["ReadWriteOnce"]

    def rbac_update(d):
        first(d, "fleet-verdict-rbac.yaml", "ClusterRole")["rules"][0]["verbs"].append("update")

    def rbac_evict(d):
        first(d, "fleet-verdict-rbac.yaml", "ClusterRole")["rules"].append(
            {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]})

    def no_policy(d):
        d["fleet-verdict-rbac.yaml"] = [o for o in d["fleet-verdict-rbac.yaml"] if o["kind"] != "ValidatingAdmissionPolicy"]

    def mpi_typo(d):
        s = first(d, "collectives-mpijob.yaml", "MPIJob")["spec"]
        s["slotsPerWorkers"] = s.pop("slotsPerWorker")

    def mpi_enum(d):
        first(d, "collectives-mpijob.yaml", "MPIJob")["spec"]["launcherCreationPolicy"] = "WaitForWorkers"

    def mpi_impl(d):
        first(d, "collectives-mpijob.yaml", "MPIJob")["spec"]["mpiImplementation"] = "OpenMPl"

    def mpi_template_typo(d):
        w = first(d, "collectives-mpijob.yaml", "MPIJob")["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        w["containers"][0]["imagee"] = w["containers"][0].pop("image")

    def mpi_np(d):
        first(d, "collectives-mpijob.yaml", "MPIJob")["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 4

    def mpi_no_sshd_image(d):
        w = first(d, "collectives-mpijob.yaml", "MPIJob")["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        w["containers"][0]["image"] = "registry.example.com/gpubench:cuda13"

    return [
        ("privileged: true", privileged, "privileged must be false"),
        ("allowPrivilegeEscalation left out", escalation, "allowPrivilegeEscalation must be false"),
        ("CAP_SYS_ADMIN added", sys_admin, "capabilities added ['SYS_ADMIN']"),
        ("no /dev/shm", no_shm, "/dev/shm as an emptyDir"),
        ("/dev/shm on disk", shm_on_disk, "/dev/shm as an emptyDir"),
        ("no nvidia.com/gpu toleration", no_toleration, "tolerate nvidia.com/gpu"),
        ("no GPU limit", no_gpu, "must ask resources.limits nvidia.com/gpu"),
        ("an MPIJob worker without GPUs", worker_no_gpu, "must ask resources.limits nvidia.com/gpu"),
        ("a misspelt pod field", typo_field, "Kubernetes 1.31.0 schema"),
        ("a string for backoffLimit", wrong_type, "Kubernetes 1.31.0 schema: spec.backoffLimit"),
        ("retries", retries, "backoffLimit must be 0"),
        ("a deadline of the budget alone", short_deadline, "under 10 min past the budget"),
        ("no anti-affinity", no_anti_affinity, "podAntiAffinity on kubernetes.io/hostname"),
        ("NODE_NAME not from the downward API", node_name_literal, "spec.nodeName"),
        ("a ReadWriteOnce results claim", rwo_results, "must be a ReadWriteMany claim"),
        ("RBAC update on nodes", rbac_update, "nodes may be got and patched"),
        ("RBAC pod eviction", rbac_evict, "grants ['pods/eviction']"),
        ("no admission policy beside patch", no_policy, "no ValidatingAdmissionPolicy"),
        ("a misspelt MPIJob field", mpi_typo, "MPIJob CRD schema"),
        ("an unknown launcherCreationPolicy", mpi_enum, "(types.go)"),
        ("an unknown mpiImplementation", mpi_impl, "MPIJob CRD schema: spec.mpiImplementation"),
        ("a misspelt field in an MPIJob pod", mpi_template_typo, "Worker: pod template"),
        ("-np not workers x slots", mpi_np, "mpirun -np must be workers x slotsPerWorker"),
        ("a worker image without sshd", mpi_no_sshd_image, "the MPI image"),
    ]


def main():
    docs = load_manifests()
    failures = []
    errors = check_all(docs)
    for e in errors:
        failures.append(f"manifests: {e}")
    objects = sum(len(v) for v in docs.values())
    print(f"{'FAIL' if errors else 'PASS'} {len(docs)} manifests, {objects} objects: Kubernetes {KUBERNETES_VERSION} "
          f"schemas (kubernetes-validate {kubernetes_validate.__version__ if hasattr(kubernetes_validate, '__version__') else '?'}, "
          f"strict), the MPIJob CRD schema, the project's rules")
    verdict_errors = []
    n = check_verdicts(docs, verdict_errors)
    failures += verdict_errors
    print(f"{'FAIL' if verdict_errors else 'PASS'} the fleet verdict script on {n} stand-in nodes (PASS, WARN, FAIL)")
    refused = 0
    for what, mutate, expect in mutations():
        d = copy.deepcopy(docs)
        mutate(d)
        got = check_all(d)
        if any(expect in e for e in got):
            refused += 1
        else:
            failures.append(f"negative check '{what}' was not refused with '{expect}': {got[:3]}")
    # The verdict check itself: a script that never says WARN, or reports success after a failure, is refused.
    for what, old, new in (("WARN never given", "verdict=WARN", "verdict=PASS"), ("evaluate's status lost", 'exit "$rc"', "exit 0")):
        d = copy.deepcopy(docs)
        c = first(d, "fleet-indexed-job.yaml", "Job")["spec"]["template"]["spec"]["containers"][0]
        assert old in c["args"][0], old
        c["args"][0] = c["args"][0].replace(old, new)
        got = []
        check_verdicts(d, got)
        refused += bool(got)
        if not got:
            failures.append(f"negative check '{what}' of the verdict script was not refused")
    total = len(mutations()) + 2
    print(f"{'PASS' if refused == total else 'FAIL'} {refused} of {total} mutated copies refused")
    for f in failures:
        print(f"  {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
