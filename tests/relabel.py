# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Prometheus's target relabeling, simulated for test_manifests.py: the
targets kubernetes_sd_configs' pod role makes of a pod, and what a scrape
job's relabel_configs make of them, as the Prometheus documentation
defines both (the actions the docs' scrape config uses)."""
import re


def sanitize(name):
    return re.sub(r'[^a-zA-Z0-9_]', '_', name)


def pod_targets(pod, ip, node):
    """The targets kubernetes_sd's pod role makes of a pod: one per
    container port, with its metadata labels."""
    meta = pod['metadata']
    base = {'__meta_kubernetes_namespace': meta['namespace'],
            '__meta_kubernetes_pod_name': meta['name'],
            '__meta_kubernetes_pod_ip': ip,
            '__meta_kubernetes_pod_node_name': node,
            '__meta_kubernetes_pod_host_ip': '192.0.2.10',
            '__meta_kubernetes_pod_uid':
                '0b7d9f3c-7f5e-4e6a-9d4c-2f8f8a1e6b21',
            '__meta_kubernetes_pod_phase': 'Running',
            '__meta_kubernetes_pod_ready': 'true',
            '__meta_kubernetes_pod_controller_kind': 'DaemonSet',
            '__meta_kubernetes_pod_controller_name': meta['name']}
    for k, v in meta.get('labels', {}).items():
        base['__meta_kubernetes_pod_label_' + sanitize(k)] = v
        base['__meta_kubernetes_pod_labelpresent_' + sanitize(k)] = 'true'
    for k, v in meta.get('annotations', {}).items():
        base['__meta_kubernetes_pod_annotation_' + sanitize(k)] = v
        base['__meta_kubernetes_pod_annotationpresent_' + sanitize(k)] = \
            'true'
    host = f'[{ip}]' if ':' in ip else ip
    out = []
    for c in pod['spec']['containers']:
        for p in c.get('ports', []):
            t = dict(base)
            t.update({'__address__': f"{host}:{p['containerPort']}",
                      '__meta_kubernetes_pod_container_name': c['name'],
                      '__meta_kubernetes_pod_container_init': 'false',
                      '__meta_kubernetes_pod_container_image': c['image'],
                      '__meta_kubernetes_pod_container_port_name':
                          p.get('name', ''),
                      '__meta_kubernetes_pod_container_port_number':
                          str(p['containerPort']),
                      '__meta_kubernetes_pod_container_port_protocol':
                          p.get('protocol', 'TCP')})
            out.append(t)
    return out


def expand(template, m):
    """Go's regexp Expand, which relabeling's replacement uses."""
    def one(x):
        name = x.group(1) or x.group(2)
        try:
            return m.group(int(name) if name.isdigit() else name) or ''
        except IndexError:  # no such group: empty, as in Go
            return ''
    return re.sub(r'\$\{(\w+)\}|\$(\w+)', one, template)


def relabel(labels, rules):
    """Prometheus's relabeling of one target: the labels, or None when it
    is dropped. The actions the config uses, as the docs define them."""
    labels = dict(labels)
    for r in rules:
        action = r.get('action', 'replace')
        regex = re.compile('^(?:' + r.get('regex', '(.*)') + ')$')
        value = r.get('separator', ';').join(
            labels.get(s, '') for s in r.get('source_labels', []))
        if action == 'keep':
            if not regex.match(value):
                return None
        elif action == 'drop':
            if regex.match(value):
                return None
        elif action == 'replace':
            m = regex.match(value)
            if m:
                target = expand(r['target_label'], m)
                res = expand(r.get('replacement', '$1'), m)
                if res:
                    labels[target] = res
                else:
                    labels.pop(target, None)
        elif action == 'labeldrop':
            labels = {k: v for k, v in labels.items() if not regex.match(k)}
        elif action == 'labelkeep':
            labels = {k: v for k, v in labels.items() if regex.match(k)}
        elif action == 'labelmap':
            for k, v in list(labels.items()):
                m = regex.match(k)
                if m:
                    labels[expand(r.get('replacement', '$1'), m)] = v
        else:
            raise ValueError(f'relabel action {action} not simulated')
    return labels


def scrape(job, target):
    """What Prometheus scrapes for a discovered target: (address, path,
    labels it stores), or None."""
    t = dict(target)
    t.setdefault('__metrics_path__', job.get('metrics_path', '/metrics'))
    t.setdefault('__scheme__', job.get('scheme', 'http'))
    t['job'] = job['job_name']
    t = relabel(t, job.get('relabel_configs', []))
    if t is None:
        return None
    t.setdefault('instance', t['__address__'])
    return (t['__address__'], t['__metrics_path__'],
            {k: v for k, v in t.items() if not k.startswith('__')})
