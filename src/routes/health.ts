// /health: liveness with job status; exempt from rate limits.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'

export const healthRoutes = (s: Services) =>
  new Elysia({ tags: ['Operations'] }).get('/health', () => ({ status: 'ok', ...s.health() }), {
    response: { 200: t.Object({ status: t.String() }, { additionalProperties: true }) },
    detail: { summary: 'Liveness' },
  })
