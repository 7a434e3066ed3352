// Read throughput: each route under wrk, right after the bare baseline under the same wrk, so the ratio compares
// two runs a few seconds apart on the same (shared, noisy) machine. Each route is measured PAIRS times and the
// median ratio is its figure: on this machine the bare baseline alone swings from 50k to 95k req/s between runs.
// Each time, the bare server also answers the route's own body (status and type included): the ratio to that shows
// what is left once the size of the answer itself is set aside.
import type { Manifest } from './seed.ts'
import { wrk, type WrkRequest, type WrkResult } from './wrk.ts'
import { moreTargets, type Found } from './routes.ts'

/** Which target applies: see TARGETS in report.ts. */
export type ReadGroup = 'feed' | 'board' | 'challenge' | 'list' | 'search' | 'recent' | 'image' | 'page' | 'write' | 'other'
/** A route under wrk; `request`: a method, body or headers other than a bare GET (see routes.ts). */
export interface ReadTarget {
  name: string
  path: string
  group: ReadGroup
  expect: number
  request?: WrkRequest
  connections?: number
}

/** The routes measured under wrk: the original set, then every other route a client can reach (routes.ts). */
export function readTargets(m: Manifest, found: Found): ReadTarget[] {
  return [...firstTargets(m), ...moreTargets(m, found)]
}

function firstTargets(m: Manifest): ReadTarget[] {
  const t = (name: string, path: string, group: ReadGroup, expect = 200): ReadTarget => ({ name, path, group, expect })
  const boards = ['most-popular', 'top-revenue', 'top-providers', 'top-buyers'].flatMap((b) =>
    ['7d', 'all'].map((p) => t(`GET leaderboards/${b}?period=${p}`, `/v1/leaderboards/${b}?period=${p}`, 'board')),
  )
  return [
    t('GET /v1/feeds/{id}', `/v1/feeds/${m.hot_feed_id}`, 'feed'),
    ...boards,
    ...['trending', 'top-feeds', 'category-stats'].map((b) => t(`GET leaderboards/${b}`, `/v1/leaderboards/${b}`, 'board')),
    t('GET /v1/wallets/{id}/stats', `/v1/wallets/${m.top_seller_wallet_id}/stats`, 'board'),
    t('GET paid content, no payment (402)', `/v1/feeds/${m.paid_entry.feed_id}/entries/${m.paid_entry.entry_id}/content`, 'challenge', 402),
    t('GET /v1/feeds', '/v1/feeds', 'list'),
    t('GET /v1/feeds/{id}/entries', `/v1/feeds/${m.hot_feed_id}/entries`, 'list'),
    t('GET /v1/transactions', '/v1/transactions', 'list'),
    t('GET /v1/transactions?payer=', `/v1/transactions?payer=${m.heavy_buyer_address}`, 'list'),
    t('GET /v1/transactions?entry_id=', `/v1/transactions?entry_id=${m.paid_entry.entry_id}`, 'list'),
    t('GET /v1/feeds?category=&tags=', `/v1/feeds?category=${m.category_id}&tags=${m.tag}`, 'search'),
  ]
}

const init = (target: ReadTarget): RequestInit => ({
  method: target.request?.method ?? 'GET',
  headers: target.request?.headers,
  body: target.request?.body,
})

export interface Probe {
  status: number | string
  bytes: number
  ms: number
  sample: string
}

/** One request per route before any load: its status, size and cold latency (and a hint when it misbehaves). */
export async function probe(url: string, target: ReadTarget): Promise<Probe> {
  const started = performance.now()
  try {
    const response = await fetch(`${url}${target.path}`, { ...init(target), signal: AbortSignal.timeout(60_000) })
    const bytes = new Uint8Array(await response.arrayBuffer())
    const text = new TextDecoder().decode(bytes.subarray(0, 200))
    return {
      status: response.status,
      bytes: bytes.byteLength,
      ms: performance.now() - started,
      sample: response.status === target.expect ? '' : text.slice(0, 200),
    }
  } catch (error) {
    return { status: `error: ${(error as Error).message}`, bytes: 0, ms: performance.now() - started, sample: '' }
  }
}

/** A few sequential passes over every route: compiled paths, warm caches, steady memory. */
export async function warmUp(url: string, targets: ReadTarget[], rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    for (const target of targets)
      await fetch(`${url}${target.path}`, { ...init(target), signal: AbortSignal.timeout(60_000) }).then(
        (r) => r.arrayBuffer(),
        () => null,
      )
  }
}

/** A baseline run, a run of the route, and a run of the bare server answering the route's own body. */
export interface ReadPair {
  baseline: WrkResult
  result: WrkResult
  ratio: number
  sameBody: WrkResult
  ratioToSameBody: number
}
/** The pair with the median ratio (`ratioToSameBody` is the median of its own); `pairs`: all (status and p99 use all). */
export interface ReadResult extends ReadPair {
  target: ReadTarget
  probe: Probe
  pairs: ReadPair[]
}

export const PAIRS = 3

/** The bare server answers the route's body (the same bytes), status and type at /same. */
async function serveSameBody(baselineUrl: string, url: string, target: ReadTarget): Promise<void> {
  const response = await fetch(`${url}${target.path}`, init(target))
  const body = await response.arrayBuffer()
  await fetch(`${baselineUrl}/same`, {
    method: 'PUT',
    headers: { 'content-type': response.headers.get('content-type') ?? 'application/json', 'x-status': String(response.status) },
    body,
  })
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export async function measureReads(
  baselineUrl: string,
  url: string,
  targets: ReadTarget[],
  seconds: number,
  log: (line: string) => void,
): Promise<ReadResult[]> {
  const results: ReadResult[] = []
  for (const target of targets) {
    const first = await probe(url, target)
    await serveSameBody(baselineUrl, url, target)
    const pairs: ReadPair[] = []
    for (let i = 0; i < PAIRS; i++) {
      const baseline = await wrk(`${baselineUrl}/`, seconds)
      const result = await wrk(`${url}${target.path}`, seconds, target.connections, target.request)
      const sameBody = await wrk(`${baselineUrl}/same`, seconds, target.connections, target.request)
      pairs.push({ baseline, result, ratio: result.rps / baseline.rps, sameBody, ratioToSameBody: result.rps / sameBody.rps })
    }
    const middle = pairs.find((p) => p.ratio === median(pairs.map((q) => q.ratio)))!
    const toSameBody = median(pairs.map((p) => p.ratioToSameBody))
    const p99 = Math.max(...pairs.map((p) => p.result.p99_ms ?? Infinity))
    log(
      `bench: ${target.name.padEnd(44)} ${String(first.status).padEnd(4)} ${middle.result.rps.toFixed(0).padStart(7)} ` +
        `req/s  bare ${middle.baseline.rps.toFixed(0).padStart(6)}  ratio ${middle.ratio.toFixed(2)} ` +
        `(${pairs.map((p) => p.ratio.toFixed(2)).join(' ')}), to its body served ` +
        `bare ${toSameBody.toFixed(2)}  p99 ≤ ${p99.toFixed(1)} ms`,
    )
    results.push({ target, probe: first, ...middle, ratioToSameBody: toSameBody, pairs })
  }
  return results
}
