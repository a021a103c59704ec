/**
 * Drift test for deploy/: there is no container engine here, so every
 * manifest is parsed and checked against the code: ports, probe routes,
 * env names, the image's user, the grace period, selectors and secrets.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';
import { ConfigError, DEFAULTS, ENV, loadConfig, PLACEHOLDER_TOKENS } from '../../services/config.ts';

const root = path.resolve(import.meta.dirname, '../..');
const deploy = path.join(root, 'deploy');
const ENV_NAMES = new Set<string>(Object.values(ENV));

type Doc = { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown>; [key: string]: unknown };

async function manifests(): Promise<Doc[]> {
  const dir = path.join(deploy, 'kubernetes');
  const docs: Doc[] = [];
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(await readFile(path.join(dir, name), 'utf8'))) {
      expect(doc.errors, name).toEqual([]);
      docs.push(doc.toJS() as Doc);
    }
  }
  return docs;
}

const one = (docs: Doc[], kind: string): Doc => {
  const found = docs.filter((d) => d.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0];
};

/** Every `PTC_*` name a text mentions. */
const envNamesIn = (text: string): string[] => [...new Set(text.match(/\bPTC_[A-Z_]+\b/g) ?? [])];

interface Container {
  ports: { name: string; containerPort: number }[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean };
  startupProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  volumeMounts: { name: string; mountPath: string }[];
}

describe('deploy/kubernetes', async () => {
  const docs = await manifests();
  const deployment = one(docs, 'Deployment');
  const spec = deployment.spec as {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        terminationGracePeriodSeconds: number;
        securityContext: { runAsUser: number; runAsNonRoot: boolean };
        containers: Container[];
        volumes: { name: string; emptyDir?: object; persistentVolumeClaim?: { claimName: string } }[];
      };
    };
  };
  const pod = spec.template.spec;
  const container = pod.containers[0];
  const env = Object.fromEntries(container.env.map((e) => [e.name, e]));

  it('runs at least two replicas, with a grace period above shutdownGraceMs and shutdownMarginMs', () => {
    expect(spec.replicas).toBeGreaterThanOrEqual(2);
    // A replica stuck past both exits by itself, naming the step, before the kubelet's SIGKILL.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(DEFAULTS.shutdownGraceMs + DEFAULTS.shutdownMarginMs);
  });

  it('listens on the port the code and the image use, and probes routes the service has', async () => {
    const port = container.ports.find((p) => p.name === 'http')!;
    expect(port.containerPort).toBe(DEFAULTS.port);
    expect(env.PTC_PORT?.value).toBe(String(DEFAULTS.port));
    const dockerfile = await readFile(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${DEFAULTS.port}$`, 'm'));
    const routes = await readFile(path.join(root, 'services/routes-info.ts'), 'utf8');
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
      expect(probe.httpGet.port).toBe('http');
      expect(routes).toContain(`app.get('${probe.httpGet.path}'`);
    }
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
  });

  it('starts Node with every host flag, so the CLI runs without re-executing itself', async () => {
    const dockerfile = await readFile(path.join(root, 'Dockerfile'), 'utf8');
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    expect(cmd.slice(0, 1)).toEqual(['node']);
    expect(cmd).toEqual(expect.arrayContaining([...ISOLATE_HOST_FLAGS]));
  });

  it('runs as the image’s non-root user on a read-only root, with /tmp writable', async () => {
    const dockerfile = await readFile(path.join(root, 'Dockerfile'), 'utf8');
    // node:24-slim's `node` user is uid 1000.
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(pod.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const tmp = container.volumeMounts.find((m) => m.mountPath === '/tmp')!;
    expect(pod.volumes.find((v) => v.name === tmp.name)?.emptyDir).toBeDefined();
    // The data dir (spill, local files) must be under a writable mount.
    expect(env.PTC_DATA?.value?.startsWith('/tmp/')).toBe(true);
    const workspace = container.volumeMounts.find((m) => m.mountPath === env.PTC_WORKSPACE?.value)!;
    const claim = pod.volumes.find((v) => v.name === workspace.name)?.persistentVolumeClaim?.claimName;
    const pvc = docs.find((d) => d.kind === 'PersistentVolumeClaim' && d.metadata?.name === claim);
    expect((pvc?.spec as { accessModes: string[] }).accessModes).toEqual(['ReadWriteMany']);
  });

  it('sets requests and limits', () => {
    expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
    expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
  });

  it('uses only env names the config reads, and takes the token and database URL from the Secret', async () => {
    for (const e of container.env) expect(ENV_NAMES, e.name).toContain(e.name);
    const secret = one(docs, 'Secret') as Doc & { stringData: Record<string, string> };
    for (const name of [ENV.token, ENV.databaseUrl]) {
      expect(env[name]?.valueFrom?.secretKeyRef).toEqual({ name: secret.metadata!.name, key: name });
      expect(secret.stringData[name]).toBeDefined();
    }
    const readme = await readFile(path.join(deploy, 'kubernetes/README.md'), 'utf8');
    for (const name of envNamesIn(readme)) expect(ENV_NAMES, name).toContain(name);
  });

  it("the Secret's token is a placeholder the service refuses to start with", () => {
    const secret = one(docs, 'Secret') as Doc & { stringData: Record<string, string> };
    expect(PLACEHOLDER_TOKENS).toContain(secret.stringData[ENV.token]);
    expect(() => loadConfig({ cwd: root, env: { [ENV.token]: secret.stringData[ENV.token] } })).toThrow(ConfigError);
  });

  it('points the Service, the PodDisruptionBudget and the autoscaler at the Deployment', () => {
    const labels = spec.template.metadata.labels;
    expect(spec.selector.matchLabels).toEqual(labels);
    const service = one(docs, 'Service').spec as { selector: Record<string, string>; ports: { targetPort: number | string }[] };
    expect(service.selector).toEqual(labels);
    expect([DEFAULTS.port, 'http']).toContain(service.ports[0].targetPort);
    const pdb = one(docs, 'PodDisruptionBudget').spec as { minAvailable: number; selector: { matchLabels: Record<string, string> } };
    expect(pdb.selector.matchLabels).toEqual(labels);
    expect(pdb.minAvailable).toBeLessThan(spec.replicas);
    const hpa = one(docs, 'HorizontalPodAutoscaler').spec as { scaleTargetRef: { kind: string; name: string }; minReplicas: number };
    expect(hpa.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: deployment.metadata!.name });
    expect(hpa.minReplicas).toBeGreaterThanOrEqual(2);
  });
});

describe('deploy/compose.yaml', async () => {
  const text = await readFile(path.join(deploy, 'compose.yaml'), 'utf8');
  const doc = parseAllDocuments(text)[0];
  const compose = doc.toJS({ maxAliasCount: 100 }) as {
    services: Record<string, { image?: string; build?: string; user?: string; read_only?: boolean; stop_grace_period?: string; environment?: Record<string, string>; volumes?: string[] }>;
  };
  const replicas = Object.entries(compose.services).filter(([, s]) => s.environment?.PTC_DATABASE_URL !== undefined);

  it('parses, runs three replicas as uid 1000 on a read-only root, and names only known env vars', () => {
    expect(doc.errors).toEqual([]);
    expect(replicas).toHaveLength(3);
    for (const [, service] of replicas) {
      expect(service.user).toBe('1000:1000');
      expect(service.read_only).toBe(true);
      expect(service.environment!.PTC_PORT).toBe(String(DEFAULTS.port));
      expect(service.environment!.PTC_DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      // A replica stuck past its shutdown grace and margin exits by itself before Docker's SIGKILL.
      expect(Number(/^(\d+)s$/.exec(service.stop_grace_period ?? '')?.[1]) * 1000).toBeGreaterThan(DEFAULTS.shutdownGraceMs + DEFAULTS.shutdownMarginMs);
    }
    for (const name of envNamesIn(text)) expect(ENV_NAMES, name).toContain(name);
  });

  it("mounts named volumes only on folders the image makes and gives to its user, so they are uid 1000's", async () => {
    const dockerfile = await readFile(path.join(root, 'Dockerfile'), 'utf8');
    const made = /^RUN mkdir -p ((?:\/\S+ ?)+) && chown -R node:node (\/\S+)$/m.exec(dockerfile);
    expect(made, 'a RUN mkdir -p … && chown -R node:node … line').not.toBeNull();
    const [folders, owned] = [made![1].trim().split(' '), made![2]];
    const named = new Set(Object.keys((doc.toJS() as { volumes?: Record<string, unknown> }).volumes ?? {}));
    for (const [name, service] of replicas) {
      for (const volume of service.volumes ?? []) {
        const [source, target] = volume.split(':');
        if (!named.has(source)) continue;
        expect(folders, `${name}: ${volume}`).toContain(target);
        expect(target.startsWith(`${owned}/`), `${name}: ${volume}`).toBe(true);
      }
    }
  });

  it('puts a round-robin proxy over exactly those replicas', async () => {
    const proxy = Object.values(compose.services).find((s) => s.image?.startsWith('nginx'))!;
    const mount = proxy.volumes!.find((v) => v.endsWith(':/etc/nginx/nginx.conf:ro'))!;
    const conf = await readFile(path.join(deploy, mount.split(':')[0]), 'utf8');
    const upstream = [...conf.matchAll(/^\s*server (\S+):(\d+);/gm)].map((m) => [m[1], Number(m[2])]);
    expect(upstream).toEqual(replicas.map(([name]) => [name, DEFAULTS.port]));
    expect(conf).toContain('proxy_buffering off');
  });
});

describe('deploy/compose.tracing.yaml', async () => {
  const text = await readFile(path.join(deploy, 'compose.tracing.yaml'), 'utf8');
  const doc = parseAllDocuments(text)[0];
  const overlay = doc.toJS({ maxAliasCount: 100 }) as {
    services: Record<string, { image?: string; environment?: Record<string, string>; depends_on?: Record<string, unknown> }>;
  };
  const base = parseAllDocuments(await readFile(path.join(deploy, 'compose.yaml'), 'utf8'))[0].toJS({ maxAliasCount: 100 }) as {
    services: Record<string, { environment?: Record<string, string> }>;
  };
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; peerDependencies: Record<string, string> };

  it('adds Jaeger and points every replica of compose.yaml at its OTLP/HTTP port', async () => {
    expect(doc.errors).toEqual([]);
    const jaeger = Object.entries(overlay.services).find(([, s]) => s.image?.startsWith('jaegertracing/all-in-one:'));
    expect(jaeger).toBeDefined();
    const replicas = Object.keys(base.services).filter((name) => base.services[name].environment?.PTC_DATABASE_URL !== undefined);
    expect(Object.keys(overlay.services).filter((name) => name !== jaeger![0]).sort()).toEqual(replicas.sort());
    const { tracesEndpoint } = await import('../../services/otel-sdk.ts');
    for (const name of replicas) {
      const env = overlay.services[name].environment!;
      expect(tracesEndpoint(env)).toBe(`http://${jaeger![0]}:4318/v1/traces`);
      expect(Object.keys(env).every((key) => key.startsWith('OTEL_'))).toBe(true);
      expect(overlay.services[name].depends_on).toHaveProperty(jaeger![0]);
    }
  });

  it("installs every OpenTelemetry peer in the image, at the version the tests run", async () => {
    const dockerfile = await readFile(path.join(root, 'Dockerfile'), 'utf8');
    const { OTEL_PACKAGES } = await import('../../services/otel-sdk.ts');
    const peers = Object.keys(pkg.peerDependencies).filter((name) => name.startsWith('@opentelemetry/')).sort();
    expect(OTEL_PACKAGES.map((spec) => spec.slice(0, spec.lastIndexOf('@'))).sort()).toEqual(peers);
    for (const name of peers) {
      expect(dockerfile).toContain(` ${name}@${pkg.devDependencies[name]} `);
      expect(OTEL_PACKAGES).toContain(`${name}@${pkg.peerDependencies[name]}`);
    }
  });
});
