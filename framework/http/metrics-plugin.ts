import { z } from 'zod';
import { definePlugin } from '@baton/kernel';
import { BatonMetrics, METRICS } from './metrics.js';

/** Provides the host's BatonMetrics: one registry per host, never the global default one. */
export const metricsPlugin = definePlugin({
  id: 'metrics',
  description: 'Prometheus metrics in a registry of the host\'s own.',
  provides: [METRICS],
  options: z
    .object({
      defaultMetrics: z.boolean().default(true),
      labels: z.record(z.string(), z.string()).optional(),
    })
    .strict(),
  register: (ctx) => ctx.provide(METRICS, { useFactory: () => new BatonMetrics(ctx.options) }),
});
