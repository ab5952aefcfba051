import pino from 'pino';
import { Plan } from '../../../src/auth/plans';
import { ApiKeyRole } from '../../../src/auth/role';
import { Scope } from '../../../src/common/scope';
import { Admitter, type AdmitterOptions } from '../../../src/limits/admit';
import { RateLimiter } from '../../../src/limits/limiter';
import { MemoryLimiterStore } from '../../../src/limits/memory.store';

/** A caller as the admitter and the plans see it: an address, or a key of a plan and role. */
export type Who = { kind: 'anonymous'; address: string } | { kind: 'key'; key: { id: string; plan: Plan; role: ApiKeyRole; quota: { perMinute: number; perDay: number } } };

export const anonymous = (address: string): Who => ({ kind: 'anonymous', address });

/** One key per plan and role; its quota is the admitter's `quotaOf`, not this. */
export const keyOf = (plan: Plan, role = ApiKeyRole.CLIENT): Who => ({ kind: 'key', key: { id: `${plan}-${role}`, plan, role, quota: { perMinute: 1, perDay: 1 } } });

/** What an admitter under test observed: its refusals by reason. */
export interface Observed {
  refusals: string[];
}

/**
 * An admitter on an in-memory limiter of its own, logging nothing, every caller's quota a
 * million requests unless `options` says otherwise; `observed` collects what its metrics are told.
 */
export function testAdmitter(options: Partial<AdmitterOptions<Who>> = {}, observed: Observed = { refusals: [] }): Admitter<Who> {
  return new Admitter<Who>({
    limiter: new RateLimiter(new MemoryLimiterStore(), { threshold: 10, durationMs: 60_000 }),
    metrics: { observeRefusal: (reason) => observed.refusals.push(reason), observeAdmissionWait: () => undefined },
    logger: pino({ level: 'silent' }),
    quotaOf: () => ({ perMinute: 1_000_000, perDay: 1_000_000 }),
    ...options,
  });
}

/**
 * The names of `callers` admitted now, each asked once (as an HTTP request, or as a subscribe)
 * and its request ended at once; every other one must have been refused as `refused` describes.
 */
export async function admittedNow(admitter: Admitter<Who>, callers: [string, Who][], refused: object, as: 'request' | 'subscribe' = 'request'): Promise<string[]> {
  const admitted: string[] = [];
  for (const [name, caller] of callers) {
    const scope = new Scope();
    const { refusal } = await (as === 'request' ? admitter.admit(caller, name, scope) : admitter.admitSubscribe(caller, name));
    scope.end();
    if (!refusal) admitted.push(name);
    else expect(refusal).toMatchObject(refused);
  }
  return admitted;
}
