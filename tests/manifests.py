# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""deploy/kubernetes read as kubectl apply -k would make it.

What the manifests use of kustomize, and nothing more: resources (files
and directories with a kustomization.yaml of their own), JSON 6902
patches with a target, and images. Used by test_manifests.py and by the
container stage (tests/container/podman_args.py).
"""
import copy
import os

import yaml


class ManifestError(Exception):
    pass


def load_file(path):
    """The objects of a YAML file (one or more documents)."""
    with open(path, encoding='utf-8') as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def _pointer(path):
    if not path.startswith('/'):
        raise ManifestError(f'JSON pointer {path!r} does not start with /')
    return [p.replace('~1', '/').replace('~0', '~')
            for p in path[1:].split('/')]


def _walk(doc, parts, path):
    for p in parts:
        if isinstance(doc, list):
            if not p.isdigit() or int(p) >= len(doc):
                raise ManifestError(f'{path}: no element {p}')
            doc = doc[int(p)]
        elif isinstance(doc, dict):
            if p not in doc:
                raise ManifestError(f'{path}: no member {p}')
            doc = doc[p]
        else:
            raise ManifestError(f'{path}: {p} of a scalar')
    return doc


def json_patch(doc, ops):
    """RFC 6902's add, replace and remove, as kustomize applies them."""
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = _pointer(op['path'])
        parent = _walk(doc, parts[:-1], op['path'])
        last = parts[-1]
        if op['op'] == 'add':
            if isinstance(parent, list):
                if last == '-':
                    parent.append(copy.deepcopy(op['value']))
                elif last.isdigit() and int(last) <= len(parent):
                    parent.insert(int(last), copy.deepcopy(op['value']))
                else:
                    raise ManifestError(f"{op['path']}: bad index")
            else:
                parent[last] = copy.deepcopy(op['value'])
        elif op['op'] in ('replace', 'remove'):
            _walk(parent, [last], op['path'])  # must be there
            key = int(last) if isinstance(parent, list) else last
            if op['op'] == 'replace':
                parent[key] = copy.deepcopy(op['value'])
            else:
                del parent[key]
        else:
            raise ManifestError(f"JSON patch op {op['op']!r} not handled")
    return doc


def _matches(obj, target):
    api = obj.get('apiVersion', '')
    group, _, version = api.rpartition('/')
    want = {'kind': obj.get('kind'), 'name': obj['metadata'].get('name'),
            'group': group, 'version': version,
            'namespace': obj['metadata'].get('namespace')}
    return all(want.get(k) == v for k, v in target.items())


def kustomize(directory):
    """The objects kustomization.yaml in directory makes."""
    kfile = os.path.join(directory, 'kustomization.yaml')
    k = load_file(kfile)[0]
    if k.get('kind') != 'Kustomization':
        raise ManifestError(f'{kfile}: not a Kustomization')
    objs = []
    for res in k.get('resources', []):
        path = os.path.normpath(os.path.join(directory, res))
        if os.path.isdir(path):
            objs += kustomize(path)
        else:
            objs += load_file(path)
    for patch in k.get('patches', []):
        ops = load_file(os.path.join(directory, patch['path']))[0]
        if not isinstance(ops, list) or 'target' not in patch:
            raise ManifestError(f'{kfile}: only JSON 6902 patches with a '
                                'target are handled')
        hits = [i for i, o in enumerate(objs)
                if _matches(o, patch['target'])]
        if not hits:
            raise ManifestError(f"{kfile}: patch {patch['path']} "
                                'matches no object')
        for i in hits:
            objs[i] = json_patch(objs[i], ops)
    for image in k.get('images', []):
        for o in objs:
            for c in pod_containers(o):
                name, _, tag = c['image'].rpartition(':')
                if name == image['name']:
                    c['image'] = (image.get('newName', name) + ':' +
                                  image.get('newTag', tag))
    return objs


def pod_spec(obj):
    """The pod template's spec of a workload object, else None."""
    if obj.get('kind') in ('DaemonSet', 'Deployment', 'StatefulSet'):
        return obj['spec']['template']['spec']
    return None


def pod_containers(obj):
    spec = pod_spec(obj)
    if spec is None:
        return []
    return spec.get('initContainers', []) + spec.get('containers', [])


def one(objs, kind, what):
    found = [o for o in objs if o.get('kind') == kind]
    if len(found) != 1:
        raise ManifestError(f'{what}: {len(found)} {kind} objects, not 1')
    return found[0]


def exporter_container(ds):
    cs = [c for c in ds['spec']['template']['spec']['containers']
          if c.get('name') == 'shpmu-exporter']
    if len(cs) != 1:
        raise ManifestError('the DaemonSet has no (single) container named '
                            'shpmu-exporter')
    return cs[0]


def flag(args, name):
    """The value of --name=VALUE in args (the last one), else None."""
    value = None
    for a in args:
        if a.startswith(name + '='):
            value = a[len(name) + 1:]
    return value
