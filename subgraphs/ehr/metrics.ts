import type { ConcurrencyGate } from '../../common/concurrency-gate';
import { Counter, defineOnce, Gauge, type MetricsRegistry } from '../../common/metrics/registry';

/** What the clinical record records; series defined here only. */
export interface EhrMetrics {
  /** A checkpoint pass finished: `signed` checkpoints were appended (0 when no chain moved). */
  checkpointPass(signed: number, at: Date): void;
  checkpointFailed(): void;
  /** Composition versions decrypted to answer a request (what the clinical index keeps searches from doing wholesale). */
  compositionsDecrypted(count: number): void;
  /** XDS registry rows (document entries, submission sets) read to answer a search (what paging in SQL keeps to the page). */
  registryRowsRead(count: number): void;
}

/** The AQL gate's counts, read at each scrape. */
export function aqlGateMetrics(registry: MetricsRegistry, gate: ConcurrencyGate): void {
  defineOnce(registry, 'aql-gate', (registers) => {
    new Gauge({
      name: 'caregraph_aql_queries_running',
      help: 'AQL queries being evaluated in this process (at most AQL_CONCURRENCY)',
      registers: [registers],
      collect() {
        this.set(gate.running);
      },
    });
    new Gauge({
      name: 'caregraph_aql_queries_waiting',
      help: 'AQL queries waiting for a turn in this process',
      registers: [registers],
      collect() {
        this.set(gate.waiting);
      },
    });
    new Counter({
      name: 'caregraph_aql_queue_waits_total',
      help: 'AQL queries that had to wait for a turn',
      registers: [registers],
      collect() {
        this.reset();
        this.inc(gate.waited);
      },
    });
  });
}

export function ehrMetrics(registry: MetricsRegistry): EhrMetrics {
  return defineOnce(registry, 'ehr', (registers) => {
    const signed = new Counter({
      name: 'caregraph_audit_checkpoints_total',
      help: 'Signed audit-chain checkpoints appended by this process',
      registers: [registers],
    });
    const failures = new Counter({ name: 'caregraph_audit_checkpoint_failures_total', help: 'Audit checkpoint passes that failed', registers: [registers] });
    let lastPass: number | undefined;
    new Gauge({
      name: 'caregraph_audit_checkpoint_age_seconds',
      help: 'Seconds since the last successful checkpoint pass (every chain covered); absent before the first',
      registers: [registers],
      collect() {
        if (lastPass !== undefined) this.set((Date.now() - lastPass) / 1000);
      },
    });
    const decrypted = new Counter({
      name: 'caregraph_composition_decrypts_total',
      help: 'Composition versions decrypted to answer requests',
      registers: [registers],
    });
    const registryRows = new Counter({
      name: 'caregraph_xds_registry_rows_read_total',
      help: 'XDS registry rows (document entries, submission sets) read to answer searches',
      registers: [registers],
    });
    // Present from the start, so a rate over them is defined before the first failure.
    failures.inc(0);
    decrypted.inc(0);
    registryRows.inc(0);
    return {
      checkpointPass: (count, at) => {
        signed.inc(count);
        lastPass = at.getTime();
      },
      checkpointFailed: () => failures.inc(),
      compositionsDecrypted: (count) => decrypted.inc(count),
      registryRowsRead: (count) => registryRows.inc(count),
    };
  });
}
