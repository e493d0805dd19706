#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The deployment as parsed objects, held to what the exporter needs.

usage: test_manifests.py SOURCE_ROOT SHPMU_EXPORTER VERSION

deploy/kubernetes as kubectl apply -k makes it (and host-scope/, the
same in host scope), servicemonitor.yaml, deploy/container/Containerfile
and the scrape config of docs/kubernetes.md, checked as data, never by
matching their text:

- no privileged container, no privilege escalation, capabilities exactly
  drop ALL, add PERFMON and BPF; a read-only root; the runtime's seccomp
  profile; no host network, PID, IPC or user namespace sharing beyond
  the host's users; no API access (no token, no RBAC object);
- the mounts the arguments need, from the node's paths, read-only (the
  BPF filesystem writable, outside /sys, only where --scope=host is
  given); every hostPath with a type;
- every argument a flag that SHPMU_EXPORTER --help lists, with a value
  where it takes one;
- probes on /metrics at the metrics port, which is the listen address's,
  the annotations', the Service's, the ServiceMonitor's and the image's
  EXPOSE; requests and limits, requests within limits;
- the image the one the container stage builds (localhost/
  shpmu-exporter:VERSION), from a Containerfile whose ENTRYPOINT is the
  exporter;
- the scrape config: promtool check config with its kubernetes_sd_configs
  swapped for a static target (Debian's promtool is built without
  Kubernetes discovery), and its relabeling run on the targets the pod
  role makes of the DaemonSet's pod (IPv4 and IPv6) and of a stranger's.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def skip(why):
    print('SKIP: ' + why)
    sys.exit(77)


try:
    import yaml
except ImportError:
    skip('no python3-yaml (Debian: python3-yaml)')

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manifests  # noqa: E402
import relabel  # noqa: E402

ROOT, EXPORTER, VERSION = sys.argv[1:4]
DEPLOY = os.path.join(ROOT, 'deploy', 'kubernetes')
IMAGE = 'localhost/shpmu-exporter:' + VERSION
CAPS = ['BPF', 'PERFMON']
RBAC = {'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'}
failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print('FAIL: ' + what)
    return ok


# ---- the exporter's flags, from its --help ----

def help_flags(exporter):
    """{--flag: takes a value} from --help (usage lines and the rest)."""
    out = subprocess.run([exporter, '--help'], capture_output=True,
                         text=True)
    text = out.stdout + out.stderr
    flags = {}
    for m in re.finditer(r'(?<![\w-])(--[a-z][\w.-]*[a-z])(=)?', text):
        flags[m.group(1)] = flags.get(m.group(1), False) or bool(m.group(2))
    return flags


def check_args(args, flags, where):
    for a in args:
        if not check(isinstance(a, str) and a.startswith('--'),
                     f'{where}: {a!r} is not a long option'):
            continue
        name, eq, _ = a.partition('=')
        if not check(name in flags,
                     f'{where}: {name} is not a flag of shpmu-exporter '
                     '(its --help)'):
            continue
        check(bool(eq) == flags[name],
              f'{where}: {a} ' + ('needs a value (--flag=VALUE)'
                                  if flags[name] else 'takes no value'))


# ---- quantities ----

UNITS = {'': 1, 'm': 1e-3, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12,
         'Ki': 2**10, 'Mi': 2**20, 'Gi': 2**30, 'Ti': 2**40}


def quantity(q):
    m = re.fullmatch(r'([0-9.]+)([a-zA-Z]*)', str(q))
    if not m or m.group(2) not in UNITS:
        raise ValueError(f'bad quantity {q!r}')
    return float(m.group(1)) * UNITS[m.group(2)]


# ---- the DaemonSet ----

def under(path, top):
    return path == top or path.startswith(top.rstrip('/') + '/')


def check_security(spec, c, where):
    sc = c.get('securityContext', {})
    check(sc.get('privileged') is not True, f'{where}: privileged')
    check(sc.get('allowPrivilegeEscalation') is False,
          f'{where}: allowPrivilegeEscalation is not false')
    caps = sc.get('capabilities', {})
    check(caps.get('drop') == ['ALL'],
          f"{where}: capabilities drop {caps.get('drop')}, not [ALL]")
    check(sorted(caps.get('add', [])) == CAPS,
          f"{where}: capabilities add {caps.get('add')}, not exactly "
          'PERFMON and BPF')
    check(sc.get('readOnlyRootFilesystem') is True,
          f'{where}: the root file system is writable')
    seccomp = sc.get('seccompProfile',
                     spec.get('securityContext', {}).get('seccompProfile'))
    check(seccomp == {'type': 'RuntimeDefault'},
          f'{where}: seccompProfile {seccomp}, not RuntimeDefault')
    for p in c.get('ports', []):
        check('hostPort' not in p, f'{where}: hostPort {p}')


def check_daemonset(objs, flags, host_scope, where):
    ds = manifests.one(objs, 'DaemonSet', where)
    spec = ds['spec']['template']['spec']
    meta = ds['spec']['template']['metadata']
    c = manifests.exporter_container(ds)
    args = c.get('args', [])
    ns = ds['metadata']['namespace']

    for key in ('hostNetwork', 'hostPID', 'hostIPC'):
        check(spec.get(key) is not True, f'{where}: {key}')
    check(spec.get('hostUsers') is not False,
          f'{where}: hostUsers false: CAP_BPF and CAP_PERFMON count only in '
          'the initial user namespace')
    check(spec.get('automountServiceAccountToken') is False,
          f'{where}: the pod mounts an API token')
    for one in manifests.pod_containers(ds):
        check_security(spec, one, f"{where}: container {one.get('name')}")
    check('command' not in c,
          f"{where}: command overrides the image's ENTRYPOINT")

    # Its arguments, and the mounts they need.
    check_args(args, flags, f'{where}: args')
    check(('--scope=host' in args) == host_scope,
          f'{where}: --scope=host ' + ('missing' if host_scope else 'given'))
    volumes = {v['name']: v for v in spec.get('volumes', [])}
    mounts = c.get('volumeMounts', [])
    for v in volumes.values():
        if 'hostPath' in v:
            check('type' in v['hostPath'],
                  f"{where}: hostPath volume {v['name']} has no type")
            check(any(m['name'] == v['name'] for m in mounts),
                  f"{where}: hostPath volume {v['name']} is mounted nowhere")
    by_path = {}
    for m in mounts:
        v = volumes.get(m['name'])
        if check(v is not None and 'hostPath' in v,
                 f"{where}: mount {m['mountPath']} is no hostPath volume"):
            by_path[m['mountPath']] = (m, v['hostPath'])

    def needs(mount_path, host_path, kind, why):
        got = by_path.get(mount_path)
        if not check(got is not None, f'{where}: no mount at {mount_path} '
                     f'({why})'):
            return
        m, hp = got
        check(hp['path'] == host_path, f"{where}: {mount_path} mounts "
              f"{hp['path']}, not the node's {host_path}")
        check(hp.get('type') == kind,
              f"{where}: {mount_path}: hostPath type {hp.get('type')}, "
              f'not {kind}')
        return m

    m = needs('/sys/fs/cgroup', '/sys/fs/cgroup', 'Directory',
              "the node's cgroup hierarchy")
    if m:
        check(m.get('readOnly') is True,
              f'{where}: /sys/fs/cgroup is not read-only')
    for name, host in (('--kubernetes.logs-dir', '/var/log/pods'),
                       ('--kubernetes.container-logs-dir',
                        '/var/log/containers')):
        value = manifests.flag(args, name)
        if check(value is not None, f'{where}: no {name}'):
            m = needs(value, host, 'Directory', name)
            if m:
                check(m.get('readOnly') is True,
                      f'{where}: {value} is not read-only')
    bpffs = manifests.flag(args, '--bpffs')
    for path, (m, hp) in by_path.items():
        if under(hp['path'], '/sys/fs/bpf'):
            check(host_scope, f'{where}: the BPF filesystem is mounted '
                  '({path}) without --scope=host')
            check(bpffs is not None and under(bpffs, path),
                  f'{where}: --bpffs={bpffs} is not in the BPF '
                  f'filesystem mounted at {path}')
            check(not under(path, '/sys'), f'{where}: the BPF filesystem '
                  f'is mounted at {path}: /sys is a read-only sysfs, and '
                  'the default AppArmor profile denies writes and locks '
                  'under /sys/fs/ but cgroup')
            check(hp['path'] != '/sys/fs/bpf', f'{where}: all of the '
                  "node's /sys/fs/bpf is mounted, the other BPF users' "
                  'pins too')
            check(m.get('readOnly') is not True, f'{where}: the BPF '
                  'filesystem is read-only: host scope pins there')
        else:
            check(m.get('readOnly') is True,
                  f'{where}: {path} is not read-only')
    if host_scope:
        check(any(under(hp['path'], '/sys/fs/bpf')
                  for _, hp in by_path.values()),
              f'{where}: --scope=host without a BPF filesystem mount')

    # One port, served where the probes, annotations and scrapes go.
    ports = c.get('ports', [])
    port = None
    if check(len(ports) == 1 and ports[0].get('name') == 'metrics',
             f"{where}: ports {ports}, not one named 'metrics'"):
        port = ports[0]['containerPort']
    listen = manifests.flag(args, '--web.listen-address') or ''
    host, _, lport = listen.rpartition(':')
    check(lport == str(port), f'{where}: --web.listen-address={listen} is '
          f'not on the container port {port}')
    check(host in ('', '0.0.0.0', '[::]'), f'{where}: listening on {host}: '
          "the pod's address must be reached (hostNetwork is false)")
    probe_paths = set()
    for name in ('livenessProbe', 'readinessProbe'):
        p = c.get(name)
        if not check(p is not None and 'httpGet' in p,
                     f'{where}: no {name} with httpGet'):
            continue
        g = p['httpGet']
        probe_paths.add(g.get('path'))
        check(g.get('path') == '/metrics',
              f"{where}: {name} on {g.get('path')}, not /metrics")
        check(g.get('port') in ('metrics', port),
              f"{where}: {name} on port {g.get('port')}, not {port}")
        check(g.get('scheme', 'HTTP') == 'HTTP', f'{where}: {name} scheme')
        check(0 < p.get('timeoutSeconds', 1) < p.get('periodSeconds', 10),
              f'{where}: {name} timeout not below its period')
    ann = meta.get('annotations', {})
    check(ann.get('prometheus.io/scrape') == 'true',
          f'{where}: no prometheus.io/scrape: "true" annotation')
    check(ann.get('prometheus.io/port') == str(port),
          f"{where}: prometheus.io/port {ann.get('prometheus.io/port')!r}, "
          f'container port {port}')
    check(ann.get('prometheus.io/path') == '/metrics',
          f"{where}: prometheus.io/path {ann.get('prometheus.io/path')!r}")

    res = c.get('resources', {})
    for kind in ('cpu', 'memory'):
        req = res.get('requests', {}).get(kind)
        lim = res.get('limits', {}).get(kind)
        if check(req is not None and lim is not None,
                 f'{where}: {kind} request {req}, limit {lim}'):
            check(quantity(req) <= quantity(lim),
                  f'{where}: {kind} request {req} above its limit {lim}')

    check({'operator': 'Exists'} in spec.get('tolerations', []),
          f'{where}: does not tolerate every taint (operator: Exists)')
    check(c.get('image') == IMAGE, f"{where}: image {c.get('image')}, not "
          f'{IMAGE} (what deploy/container/build.sh and the container '
          'stage build)')
    check(c.get('imagePullPolicy') in ('IfNotPresent', 'Never'),
          f'{where}: imagePullPolicy {c.get("imagePullPolicy")}: the image '
          'is loaded on the nodes, not pulled')

    # What it refers to is there, in its namespace.
    sa = [o for o in objs if o['kind'] == 'ServiceAccount' and
          o['metadata']['name'] == spec.get('serviceAccountName')]
    if check(len(sa) == 1, f'{where}: no ServiceAccount '
             f"{spec.get('serviceAccountName')}"):
        check(sa[0].get('automountServiceAccountToken') is False,
              f'{where}: its ServiceAccount mounts tokens')
    pc = spec.get('priorityClassName')
    check(pc is None or pc.startswith('system-') or
          any(o['kind'] == 'PriorityClass' and o['metadata']['name'] == pc
              for o in objs), f'{where}: no PriorityClass {pc}')
    check(any(o['kind'] == 'Namespace' and o['metadata']['name'] == ns
              for o in objs), f'{where}: no Namespace {ns}')
    for o in objs:
        check(o['kind'] not in RBAC,
              f"{where}: {o['kind']} {o['metadata']['name']}: the exporter "
              'asks nothing of the API server')
        if o['kind'] not in ('Namespace', 'PriorityClass'):
            check(o['metadata'].get('namespace') == ns,
                  f"{where}: {o['kind']} {o['metadata']['name']} is not in "
                  f'{ns}')
    return ds, port


def check_service_monitor(objs, sm, ds, port):
    pod_labels = ds['spec']['template']['metadata']['labels']
    ns = ds['metadata']['namespace']
    svc = manifests.one(objs, 'Service', 'kustomization')
    sel = svc['spec'].get('selector', {})
    check(sel and all(pod_labels.get(k) == v for k, v in sel.items()),
          f'Service selector {sel} does not select the pods {pod_labels}')
    sp = [p for p in svc['spec'].get('ports', [])
          if p.get('targetPort') in ('metrics', port)]
    check(len(sp) == 1, 'the Service has no port to the metrics port')
    labels = svc['metadata'].get('labels', {})
    want = sm['spec']['selector'].get('matchLabels', {})
    check(want and all(labels.get(k) == v for k, v in want.items()),
          f'ServiceMonitor selector {want} does not select the Service')
    check(ns in sm['spec'].get('namespaceSelector', {}).get('matchNames', []),
          f'ServiceMonitor does not look in {ns}')
    eps = sm['spec'].get('endpoints', [])
    if check(len(eps) == 1, 'ServiceMonitor: not one endpoint'):
        ep = eps[0]
        check(sp and ep.get('port') == sp[0].get('name'),
              f"ServiceMonitor port {ep.get('port')} is not the Service's")
        check(ep.get('path') == '/metrics', 'ServiceMonitor path')
        check(ep.get('honorLabels') is True, 'ServiceMonitor: honorLabels '
              "is not true: the workloads' namespace, pod and container "
              'labels would become exported_*')
        check(any(r.get('sourceLabels') == ['__meta_kubernetes_pod_node_name']
                  and r.get('targetLabel') == 'node'
                  for r in ep.get('relabelings', [])),
              'ServiceMonitor: no node label')


# ---- the Containerfile ----

def containerfile(path):
    """[(INSTRUCTION, arguments)], continuation lines joined."""
    out, line = [], ''
    with open(path, encoding='utf-8') as f:
        for raw in f:
            s = raw.strip()
            if not line and (not s or s.startswith('#')):
                continue
            if s.startswith('#'):
                continue
            if s.endswith('\\'):
                line += s[:-1] + ' '
                continue
            line += s
            word, _, rest = line.partition(' ')
            out.append((word.upper(), rest.strip()))
            line = ''
    return out


def check_containerfile(path, port):
    ins = containerfile(path)
    kinds = [k for k, _ in ins]
    get = {k: v for k, v in ins}
    check(any(k == 'ARG' and v.startswith('BASE=') for k, v in ins) and
          get.get('FROM') == '${BASE}',
          'Containerfile: the base is not an ARG BASE used by FROM')
    copies = ' '.join(v for k, v in ins if k == 'COPY').split()
    check('libshpmu0_*.deb' in copies and 'shpmu-exporter_*.deb' in copies,
          "Containerfile: does not COPY the project's .debs")
    check(get.get('ENTRYPOINT') and
          json.loads(get['ENTRYPOINT']) == ['/usr/bin/shpmu-exporter'],
          f"Containerfile: ENTRYPOINT {get.get('ENTRYPOINT')}")
    exposed = get.get('EXPOSE', '').split()
    check(exposed in ([str(port)], [f'{port}/tcp']),
          f'Containerfile: EXPOSE {exposed}, container port {port}')
    check(get.get('USER') in ('0', '0:0', 'root'),
          f"Containerfile: USER {get.get('USER')}, where the pod runs as 0")
    if 'CMD' in get:
        cmd = json.loads(get['CMD'])
        check(manifests.flag(cmd, '--web.listen-address') == f':{port}',
              f'Containerfile: CMD {cmd} does not listen on :{port}')
    check(kinds.index('FROM') < kinds.index('ENTRYPOINT'),
          'Containerfile: ENTRYPOINT before FROM')


# ---- the scrape config ----

SD_KEYS = {'role', 'api_server', 'kubeconfig_file', 'namespaces',
           'selectors', 'attach_metadata', 'basic_auth', 'authorization',
           'oauth2', 'proxy_url', 'follow_redirects', 'enable_http2',
           'tls_config', 'no_proxy', 'proxy_from_environment',
           'proxy_connect_header'}
SD_ROLES = {'node', 'service', 'pod', 'endpoints', 'endpointslice',
            'ingress'}


def docs_scrape_config(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    blocks = re.findall(r'^```yaml\n(.*?)^```', text, re.M | re.S)
    found = []
    for b in blocks:
        d = yaml.safe_load(b)
        if isinstance(d, dict) and 'scrape_configs' in d:
            found.append(d)
    return found


def check_scrape_config(doc, ds, port):
    jobs = [j for j in doc['scrape_configs']
            if 'kubernetes_sd_configs' in j]
    if not check(len(jobs) == 1, 'docs/kubernetes.md: not one scrape job '
                 'with kubernetes_sd_configs'):
        return
    job = jobs[0]
    for sd in job['kubernetes_sd_configs']:
        check(set(sd) <= SD_KEYS, f'kubernetes_sd_configs: unknown keys '
              f'{sorted(set(sd) - SD_KEYS)}')
        check(sd.get('role') == 'pod', f"kubernetes_sd role {sd.get('role')}"
              ', not pod')
        names = sd.get('namespaces', {}).get('names')
        check(names is None or ds['metadata']['namespace'] in names,
              f'kubernetes_sd looks in {names} only')
    check(job.get('honor_labels') is True, 'the scrape job does not honor '
          "the exporter's labels: the workloads' namespace, pod and "
          'container would become exported_*')

    # promtool on the same config, discovery swapped for a static target.
    swapped = json.loads(json.dumps(doc))
    for j in swapped['scrape_configs']:
        if j.pop('kubernetes_sd_configs', None) is not None:
            j['static_configs'] = [{'targets': ['192.0.2.1:9817']}]
    with tempfile.NamedTemporaryFile('w', suffix='.yml') as f:
        yaml.safe_dump(swapped, f)
        f.flush()
        p = subprocess.run(['promtool', 'check', 'config', f.name],
                           capture_output=True, text=True)
    check(p.returncode == 0, 'promtool check config: ' +
          (p.stdout + p.stderr).strip())

    # The targets of the DaemonSet's pod, by the relabeling.
    pod = {'metadata': dict(ds['spec']['template']['metadata'],
                            namespace=ds['metadata']['namespace'],
                            name='shpmu-exporter-x7k2p'),
           'spec': ds['spec']['template']['spec']}
    try:
        for r in job.get('relabel_configs', []):
            re.compile(r.get('regex', '(.*)'))
    except re.error as e:
        check(False, f'relabel_configs: a regex Python cannot read: {e}')
        return
    for ip, want in (('10.42.3.17', f'10.42.3.17:{port}'),
                     ('fd00:10:42::17', f'[fd00:10:42::17]:{port}')):
        got = [s for s in (relabel.scrape(job, t) for t in
                           relabel.pod_targets(pod, ip, 'node-3')) if s]
        if not check(len(got) == 1, f'{ip}: {len(got)} targets for the '
                     "exporter's pod, not 1"):
            continue
        addr, path, labels = got[0]
        check(addr == want, f'{ip}: scraped at {addr}, not {want}')
        check(path == '/metrics', f'{ip}: scraped at path {path}')
        check(labels.get('node') == 'node-3',
              f"{ip}: no node label (labels {labels})")
        clash = sorted({'namespace', 'pod', 'container'} & set(labels))
        check(not clash, f'{ip}: target labels {clash} would name the '
              "exporter's pod on series of cgroups that are no pod's")
    stranger = json.loads(json.dumps(pod))
    stranger['metadata']['labels'] = {'app': 'web'}
    stranger['metadata']['name'] = 'web-0'
    targets = relabel.pod_targets(stranger, '10.42.3.18', 'node-3')
    check(not any(relabel.scrape(job, t) for t in targets),
          "an annotated pod that is not the exporter's is scraped by a job "
          'that honors the labels it serves')


def main():
    for tool in ('promtool',):
        if subprocess.run(['sh', '-c', f'command -v {tool}'],
                          capture_output=True).returncode:
            skip(f'no {tool} (Debian: prometheus)')
    flags = help_flags(EXPORTER)
    if not flags:
        print(f'FAIL: {EXPORTER} --help lists no flag')
        return 1
    ds = port = None
    try:
        objs = manifests.kustomize(DEPLOY)
        ds, port = check_daemonset(objs, flags, False, 'deploy/kubernetes')
        host = manifests.kustomize(os.path.join(DEPLOY, 'host-scope'))
        check_daemonset(host, flags, True, 'deploy/kubernetes/host-scope')
        listed = {os.path.basename(p) for p in manifests.load_file(
            os.path.join(DEPLOY, 'kustomization.yaml'))[0]['resources']}
        files = {f for f in os.listdir(DEPLOY) if f.endswith('.yaml')}
        out = files - listed - {'kustomization.yaml'}
        check(out == {'servicemonitor.yaml'}, 'kustomization.yaml should '
              'list every manifest but servicemonitor.yaml (the API server '
              'refuses it without the operator\'s CRD); it leaves out '
              f'{sorted(out)}')
        sm = manifests.load_file(os.path.join(DEPLOY, 'servicemonitor.yaml'))
        check_service_monitor(objs, sm[0], ds, port)
    except (manifests.ManifestError, KeyError, TypeError, ValueError,
            yaml.YAMLError) as e:
        check(False, f'reading the manifests: {type(e).__name__}: {e}')
    if ds is not None:
        check_containerfile(os.path.join(ROOT, 'deploy', 'container',
                                         'Containerfile'), port)
        docs = docs_scrape_config(os.path.join(ROOT, 'docs', 'kubernetes.md'))
        if check(len(docs) == 1, 'docs/kubernetes.md: not one yaml block '
                 'with scrape_configs'):
            check_scrape_config(docs[0], ds, port)
    print(f'manifests: {checks - len(failures)} passed, {len(failures)} '
          'failed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
