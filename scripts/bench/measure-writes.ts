// Writes: signed 1 KiB entry creation under load, and the largest allowed upload against the floor of the work
// any server must do with that body (parse, decode, hash, write, fsync): three rounds, each with new bytes and its
// own floor, so one slow fsync on either side does not decide the ratio.
import { createHash, getRandomValues } from 'node:crypto'
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_CONTENT_BASE64_CHARS } from '../../src/models/entry.ts'
import { authHeaders, signer, signerFeeds, signerKey } from './signing.ts'
import { rssSampler } from './processes.ts'

export const SIGNERS = 10

export interface PostLoadResult {
  count: number
  prepare_ms: number
  elapsed_ms: number
  rps: number
  statuses: Record<string, number>
  p50_ms: number
  p99_ms: number
  first_error: string | null
}

/**
 * Creates the signers' feeds, then runs post-load.ts (its own process) for `count` signed POSTs; `prepared` is called
 * once their nonces are signed, as the clock starts.
 */
export async function signedPosts(
  url: string,
  count: number,
  prepared: () => void = () => {},
): Promise<PostLoadResult & { feed_ids: string[] }> {
  const feedIds = await signerFeeds(url, SIGNERS)
  // At most 1000 active entries per feed: keep below that (the 50 MB upload adds one more to feed 0).
  if (count / SIGNERS > 999) throw new Error(`${count} posts over ${SIGNERS} feeds exceeds the per-feed entry limit`)
  const config = { url, keys: Array.from({ length: SIGNERS }, (_, i) => signerKey(i)), feedIds, count, concurrency: 50 }
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'post-load.ts'), JSON.stringify(config)], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const lines: string[] = []
  const readOut = (async () => {
    let pending = ''
    const decoder = new TextDecoder()
    const reader = proc.stdout.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      const parts = (pending + decoder.decode(r.value, { stream: true })).split('\n')
      pending = parts.pop()!
      for (const line of parts) line === 'prepared' ? prepared() : lines.push(line)
    }
    if (pending) lines.push(pending)
  })()
  const [, err] = await Promise.all([readOut, new Response(proc.stderr).text()])
  if ((await proc.exited) !== 0) throw new Error(`post-load exited ${proc.exitCode}: ${err.slice(-1000)}`)
  return { ...(JSON.parse(lines.filter(Boolean).pop()!) as PostLoadResult), feed_ids: feedIds }
}

function randomBytes(size: number): Buffer {
  const bytes = Buffer.allocUnsafe(size)
  for (let i = 0; i < size; i += 65536) getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)))
  return bytes
}

const entryBody = (payload: Buffer) =>
  JSON.stringify({ content_base64: payload.toString('base64'), mime_type: 'video/mp4', title: 'bench upload' })

/** The floor: what the server cannot avoid doing with the body, done here in the simplest way. */
function floorMs(body: string, tmpDir: string): number {
  const path = join(tmpDir, 'floor.bin')
  const started = performance.now()
  const bytes = Buffer.from((JSON.parse(body) as { content_base64: string }).content_base64, 'base64')
  createHash('sha256').update(bytes).digest()
  const fd = openSync(path, 'w')
  writeSync(fd, bytes)
  fsyncSync(fd)
  closeSync(fd)
  const ms = performance.now() - started
  rmSync(path, { force: true })
  return ms
}

async function post(url: string, feedId: string, body: string): Promise<{ status: number | string; ms: number }> {
  const headers = await authHeaders(url, signer(signerKey(0))) // signed before the clock starts
  const started = performance.now()
  try {
    const response = await fetch(`${url}/v1/feeds/${feedId}/entries`, { method: 'POST', headers, body })
    await response.arrayBuffer()
    return { status: response.status, ms: performance.now() - started }
  } catch (error) {
    return { status: `error: ${(error as Error).message}`, ms: performance.now() - started }
  }
}

/** Rounds of the largest upload: the ratio reported is the median of the rounds' ratios. */
const UPLOAD_ROUNDS = 3
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/**
 * "50 MB upload": 50 MiB of content is 70 MiB of base64, over the 50 MiB base64 limit of POST entries; so the
 * timed upload is the largest payload the limit allows, and the 50 MiB one is sent afterwards to record its answer.
 */
export async function upload(url: string, pid: number, feedId: string, tmpDir: string) {
  const requestedBytes = 50 * 1024 * 1024
  const allowedBytes = Math.floor(MAX_CONTENT_BASE64_CHARS / 4) * 3
  const payloadBytes = Math.min(requestedBytes, allowedBytes)
  const rounds: Array<{ status: number | string; ms: number; floor_ms: number; rss_growth: number; rss_peak: number }> = []
  let bodyBytes = 0
  for (let round = 0; round < UPLOAD_ROUNDS; round++) {
    const body = entryBody(randomBytes(payloadBytes))
    bodyBytes = body.length
    const floor = floorMs(body, tmpDir)
    const sampler = rssSampler(pid)
    const result = await post(url, feedId, body)
    const rss = sampler.stop()
    rounds.push({ status: result.status, ms: result.ms, floor_ms: floor, rss_growth: rss.growth, rss_peak: rss.peak })
  }
  const overLimit = requestedBytes > allowedBytes ? await post(url, feedId, entryBody(randomBytes(requestedBytes))) : null
  const worst = rounds.reduce((a, b) => (b.rss_growth > a.rss_growth ? b : a))
  return {
    requested_payload_bytes: requestedBytes,
    payload_bytes: payloadBytes,
    body_bytes: bodyBytes,
    limit_base64_chars: MAX_CONTENT_BASE64_CHARS,
    status: rounds.find((r) => r.status !== 201)?.status ?? 201,
    ms: median(rounds.map((r) => r.ms)),
    floor_ms: median(rounds.map((r) => r.floor_ms)),
    ratio_to_floor: median(rounds.map((r) => r.ms / r.floor_ms)),
    rounds,
    rss_growth: worst.rss_growth,
    rss_peak: worst.rss_peak,
    rss_growth_per_payload: worst.rss_growth / payloadBytes,
    over_limit: overLimit && { payload_bytes: requestedBytes, status: overLimit.status, ms: overLimit.ms },
  }
}
