import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';

type Doc = Record<string, any>; // manifests are free-form; the assertions check the shape

describe('config/kubernetes/tollgate.yaml', () => {
  const docs = parseAllDocuments(readFileSync('config/kubernetes/tollgate.yaml', 'utf8'));
  const objects = docs.map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as Doc;
  });
  const byKind = (kind: string): Doc => objects.find((o) => o.kind === kind)!;

  it('is valid YAML with a ConfigMap, a Deployment and a Service', () => {
    expect(objects.map((o) => o.kind)).toEqual(['ConfigMap', 'Deployment', 'Service']);
  });

  it('runs 3 replicas with readiness on /readyz and liveness on /healthz', () => {
    const deployment = byKind('Deployment');
    expect(deployment.spec.replicas).toBe(3);
    const container = deployment.spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(30);
  });

  it('takes the Redis URL from a Secret', () => {
    const container = byKind('Deployment').spec.template.spec.containers[0];
    const redis = container.env.find((e: Doc) => e.name === 'REDIS_URL');
    expect(redis.valueFrom.secretKeyRef).toEqual({ name: 'tollgate-redis', key: 'url' });
  });

  it('ships a config the gateway accepts, pointing at Redis and PostgreSQL', () => {
    const config = parseConfig(byKind('ConfigMap').data['config.yaml'], { REDIS_URL: 'redis://redis:6379', DATABASE_URL: 'postgres://tollgate@postgres:5432/tollgate' });
    expect(config.redis.url).toBe('redis://redis:6379');
    expect(config.database.url).toBe('postgres://tollgate@postgres:5432/tollgate');
    expect(config.server.trustProxy).toBe(true);
  });

  it('takes the database URL from a Secret', () => {
    const container = byKind('Deployment').spec.template.spec.containers[0];
    const database = container.env.find((e: Doc) => e.name === 'DATABASE_URL');
    expect(database.valueFrom.secretKeyRef).toEqual({ name: 'tollgate-database', key: 'url' });
  });

  it('gives the pod longer than the whole shutdown: the preStop delay plus one shutdownGraceMs', () => {
    const spec = byKind('Deployment').spec.template.spec;
    const preStop = spec.containers[0].lifecycle.preStop.exec.command.join(' ') as string;
    const preStopMs = Number(/setTimeout\(.*?(\d+)\)/.exec(preStop)?.[1]);
    const config = parseConfig(byKind('ConfigMap').data['config.yaml'], { REDIS_URL: 'redis://redis:6379', DATABASE_URL: 'postgres://p:5432/t' });
    expect(preStopMs).toBe(5000);
    expect(preStopMs + config.server.shutdownGraceMs).toBeLessThan(spec.terminationGracePeriodSeconds * 1000);
  });
});
