// The cost of the stream audit trail. Part "apply": the ownership commands of a handoff (create,
// transfer, close, complete: three sealed records per four commands) applied to the state machine
// alone, commands/s; then the sealing alone (hash, link, pending insert) per record, so the
// trail's share of a command is read off (no switch turns the trail off: it is part of apply).
// Part "project": records/s from the replicated state into a member's audit store through the
// shared AuditTrailProjection (store, then batched acknowledgement), on the in-process consensus,
// for the memory and fs stores. One run each; CPU is shared on a busy machine, so read ratios.
import { performance } from 'node:perf_hooks';
import type { AuditStore } from '@baton/contracts/internal/audit-store.js';
import { chainRecord, emptyChain } from '@baton/consensus/internal/audit-chain.js';
import { AuditTrailProjection } from '@baton/consensus/internal/audit-projection.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { FsAuditStore } from '@baton/plugin-fs/internal/fs-audit-store.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { streamTrailSource } from '@baton/stream-transfer/internal/audit-trail-source.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/stream-metadata.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const HANDOFFS = Number(process.env.BENCH_AUDIT_HANDOFFS ?? 20_000);
const PROJECTED = Number(process.env.BENCH_AUDIT_PROJECTED ?? 2_000);

function applyMix(): { commands: number; records: number; ms: number } {
  const machine = new StreamStateMachine();
  const state = machine.initial();
  let index = 0;
  const apply = (command: StreamCommand) => {
    index += 1;
    const result = machine.apply(state, command, { position: { term: 1, index }, voters: ['m1'] });
    if (!result.ok) throw new Error(`refused: ${JSON.stringify(result)}`);
  };
  apply({ type: 'register-node', node: 'a', address: 'http://a', slots: HANDOFFS * 2 });
  apply({ type: 'register-node', node: 'b', address: 'http://b', slots: HANDOFFS * 2 });
  const start = performance.now();
  for (let i = 0; i < HANDOFFS; i++) {
    const stream = `s${i}`;
    apply({ type: 'create-stream', stream, node: 'a', actor: 'bench', at: i });
    apply({ type: 'transfer', stream, target: 'b', actor: 'bench', at: i });
    apply({ type: 'close', stream, node: 'a', epoch: 1, tail: 0, producers: {} });
    apply({ type: 'complete', stream, source: 'a', target: 'b', epoch: 1, at: i });
  }
  return { commands: HANDOFFS * 4, records: state.auditPendingCount, ms: performance.now() - start };
}

function sealOnly(): { records: number; ms: number } {
  let chain = emptyChain();
  const pending = new Map<string, unknown>();
  const start = performance.now();
  for (let i = 0; i < HANDOFFS * 3; i++) {
    const sealed = chainRecord(chain, {
      id: `${i}-0`, authority: 'streams', source: 'a', target: 'b', actor: 'bench', reason: 'admin', barrier: 0, epoch: 1,
      commit_term: 1, commit_index: i, seq: 0, kind: 'transfer_proposed', subject_type: 'stream', subject: `s${i}`, epoch_before: 1, time: i,
    });
    chain = sealed.chain;
    pending.set(sealed.record.id, { record: sealed.record, awaiting: ['m1'] });
  }
  return { records: HANDOFFS * 3, ms: performance.now() - start };
}

async function project(name: string, store: AuditStore): Promise<{ store: string; records: number; ms: number }> {
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  await consensus.propose({ type: 'register-node', node: 'a', address: 'http://a', slots: PROJECTED * 2 });
  const projection = new AuditTrailProjection(consensus, streamTrailSource, store, new VirtualClock(), createSilentLogger());
  projection.start();
  const start = performance.now();
  await Promise.all(Array.from({ length: PROJECTED }, (_, i) => consensus.propose({ type: 'create-stream', stream: `p${i}`, node: 'a' })));
  while (consensus.view().state.auditPendingCount > 0) await new Promise((resolve) => setImmediate(resolve));
  const ms = performance.now() - start;
  projection.stop();
  await projection.settled();
  await consensus.stop?.();
  return { store: name, records: PROJECTED, ms };
}

/**
 * The authority trail: raw transfer_authority moves of 1,000 authorities back and forth between
 * two datacenters (each seals a chained record on its authority's trail), commands/s; and the
 * sealing alone for as many records, so the trail's share of a raw move is read off.
 */
function authorityMoves(): { commands: number; ms: number; sealMs: number } {
  const machine = new OwnershipStateMachine();
  const state = machine.initial();
  const authorities = 1_000;
  const moves = HANDOFFS;
  let index = 0;
  const start = performance.now();
  for (let i = 0; i < moves; i++) {
    index += 1;
    const result = machine.apply(
      state,
      { type: 'transfer_authority', authority: `a${i % authorities}`, target: i % (2 * authorities) < authorities ? 'east' : 'west', actor: 'bench', reason: 'bench', observed: { at: i } },
      { position: { term: 1, index }, voters: ['m1'] },
    );
    if (!result.ok) throw new Error(`refused: ${JSON.stringify(result)}`);
  }
  const ms = performance.now() - start;
  const chains = new Map<string, ReturnType<typeof emptyChain>>();
  const sealStart = performance.now();
  for (let i = 0; i < moves; i++) {
    const authority = `a${i % authorities}`;
    const sealed = chainRecord(chains.get(authority) ?? emptyChain(), {
      id: `${i}-0`, authority, source: 'east', target: 'west', actor: 'bench', reason: 'bench', barrier: 0, epoch: 2,
      commit_term: 1, commit_index: i, seq: 0, kind: 'raw_transfer', subject_type: 'authority', subject: authority, epoch_before: 1, time: i,
    });
    chains.set(authority, sealed.chain);
  }
  return { commands: moves, ms, sealMs: performance.now() - sealStart };
}

const mix = applyMix();
const seal = sealOnly();
const perCommandUs = (mix.ms * 1000) / mix.commands;
const sealUs = (seal.ms * 1000) / seal.records;
const trailShare = (sealUs * mix.records) / (mix.ms * 1000);
console.log('audit trail: apply');
console.log(`  handoff commands with the trail   ${(mix.commands / (mix.ms / 1000)).toFixed(0)} commands/s (${perCommandUs.toFixed(1)} µs each; ${mix.records} records sealed)`);
console.log(`  sealing alone                     ${(seal.records / (seal.ms / 1000)).toFixed(0)} records/s (${sealUs.toFixed(1)} µs each)`);
console.log(`  the trail's share of apply        ${(trailShare * 100).toFixed(0)} %; without it about ${(mix.commands / ((mix.ms - sealUs * mix.records / 1000) / 1000)).toFixed(0)} commands/s`);
console.log(JSON.stringify({ bench: 'audit', part: 'apply', commandsPerSecond: Math.round(mix.commands / (mix.ms / 1000)), sealUs: Number(sealUs.toFixed(2)), trailShare: Number(trailShare.toFixed(3)) }));

const raw = authorityMoves();
const rawShare = raw.sealMs / raw.ms;
console.log('authority trail: raw moves');
console.log(`  transfer_authority with the trail ${(raw.commands / (raw.ms / 1000)).toFixed(0)} commands/s (${((raw.ms * 1000) / raw.commands).toFixed(1)} µs each)`);
console.log(`  sealing alone                     ${(raw.commands / (raw.sealMs / 1000)).toFixed(0)} records/s`);
console.log(`  the trail's share of apply        ${(rawShare * 100).toFixed(0)} %; without it about ${(raw.commands / ((raw.ms - raw.sealMs) / 1000)).toFixed(0)} commands/s`);
console.log(JSON.stringify({ bench: 'audit', part: 'authority-apply', commandsPerSecond: Math.round(raw.commands / (raw.ms / 1000)), trailShare: Number(rawShare.toFixed(3)) }));

const dir = await makeTempDir('bench-audit');
try {
  const fs = new FsAuditStore({ dir: dir.path });
  await fs.start();
  for (const result of [await project('memory', new MemoryAuditStore()), await project('fs (fsync per record)', fs)]) {
    console.log(`  projected into ${result.store.padEnd(22)} ${(result.records / (result.ms / 1000)).toFixed(0)} records/s`);
    console.log(JSON.stringify({ bench: 'audit', part: 'project', store: result.store, recordsPerSecond: Math.round(result.records / (result.ms / 1000)) }));
  }
} finally {
  await dir.remove();
}
