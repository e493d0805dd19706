#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The DaemonSet's exporter container as podman run's words, one a line.

  podman_args.py image DIR
      the container's image
  podman_args.py options DIR [MOUNTPATH=HOSTDIR...]
      podman run options for its securityContext and volume mounts (each
      from its hostPath, or from HOSTDIR where MOUNTPATH is mapped)
  podman_args.py args DIR HELP_FILE
      its arguments; those that HELP_FILE (the image's --help) does not
      list are left out, each said on stderr (test_manifests.py fails
      on them)
  podman_args.py seccomp PROFILE OUT
      where PROFILE (podman's default seccomp profile) allows bpf(2) and
      perf_event_open(2) only with CAP_SYS_ADMIN, as containers-common
      did before its change of October 2025, writes OUT: the same with
      bpf(2) allowed with CAP_BPF and perf_event_open(2) with
      CAP_PERFMON, as containerd 1.7 and Docker Engine 24 allow them by
      default (exit 0); else exit 1, OUT not written. Says which on
      stderr.

DIR is deploy/kubernetes or an overlay of it (host-scope), read as
kubectl apply -k makes it (tests/manifests.py).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))
import manifests  # noqa: E402


def container(directory):
    objs = manifests.kustomize(directory)
    ds = manifests.one(objs, 'DaemonSet', directory)
    return ds, manifests.exporter_container(ds)


def options(ds, c, maps):
    sc = c.get('securityContext', {})
    out = []
    caps = sc.get('capabilities', {})
    for cap in caps.get('drop', []):
        out.append('--cap-drop=' + cap.lower())
    for cap in caps.get('add', []):
        out.append('--cap-add=' + cap.lower())
    if sc.get('allowPrivilegeEscalation') is False:
        out.append('--security-opt=no-new-privileges')
    if sc.get('readOnlyRootFilesystem'):
        out.append('--read-only')
    if 'runAsUser' in sc:
        out.append(f"--user={sc['runAsUser']}:{sc.get('runAsGroup', 0)}")
    volumes = {v['name']: v for v in ds['spec']['template']['spec']
               .get('volumes', [])}
    for m in c.get('volumeMounts', []):
        host = maps.get(m['mountPath'],
                        volumes[m['name']]['hostPath']['path'])
        mode = 'ro' if m.get('readOnly') else 'rw'
        out.append(f"--volume={host}:{m['mountPath']}:{mode}")
    return out


def args(c, help_file):
    with open(help_file, encoding='utf-8') as f:
        known = set(re.findall(r'(?<![\w-])--[a-z][\w.-]*[a-z]', f.read()))
    kept = []
    for a in c.get('args', []):
        if a.partition('=')[0] in known:
            kept.append(a)
        else:
            print(f'NOTE: the DaemonSet passes {a}, which this build of '
                  'shpmu-exporter does not have: left out here',
                  file=sys.stderr)
    return kept


GRANTS = {'bpf': 'CAP_BPF', 'perf_event_open': 'CAP_PERFMON'}


def seccomp(src, out):
    with open(src, encoding='utf-8') as f:
        profile = json.load(f)
    rules = profile['syscalls']
    have = {n for r in rules if r['action'] == 'SCMP_ACT_ALLOW'
            for n in r.get('names', [])
            if r.get('includes', {}).get('caps') == [GRANTS.get(n)]}
    if have == set(GRANTS):
        print(f'seccomp: {src} as it is (it allows bpf with CAP_BPF, '
              'perf_event_open with CAP_PERFMON)', file=sys.stderr)
        return 1
    new = []
    for r in rules:
        names = r.get('names', [])
        gated = [n for n in names if n in GRANTS]
        excl = r.get('excludes', {}).get('caps')
        if gated and r['action'] != 'SCMP_ACT_ALLOW' and excl:
            # The denial applies without CAP_SYS_ADMIN: not with the
            # capability that grants the call either.
            for n in gated:
                new.append(dict(r, names=[n], excludes=dict(
                    r['excludes'], caps=excl + [GRANTS[n]])))
            rest = [n for n in names if n not in GRANTS]
            if rest:
                new.append(dict(r, names=rest))
        else:
            new.append(r)
    for n, cap in GRANTS.items():
        new.append({'names': [n], 'action': 'SCMP_ACT_ALLOW',
                    'includes': {'caps': [cap]}})
    profile['syscalls'] = new
    with open(out, 'w', encoding='utf-8') as f:
        json.dump(profile, f, indent=1)
    print(f'seccomp: {src} allows bpf and perf_event_open only with '
          'CAP_SYS_ADMIN; running with it as current runtimes have it (bpf '
          'with CAP_BPF, perf_event_open with CAP_PERFMON)', file=sys.stderr)
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == 'seccomp':
        return seccomp(argv[2], argv[3])
    if len(argv) < 3 or argv[1] not in ('image', 'options', 'args'):
        print(__doc__, file=sys.stderr)
        return 2
    ds, c = container(argv[2])
    if argv[1] == 'image':
        words = [c['image']]
    elif argv[1] == 'options':
        words = options(ds, c, dict(m.split('=', 1) for m in argv[3:]))
    else:
        words = args(c, argv[3])
    for w in words:
        print(w)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
