// Writes: signed 1 KiB entry creation under load, and one largest-allowed upload against the floor of the work
// any server must do with that body (parse, decode, hash, write, fsync).
import { createHash, getRandomValues } from 'node:crypto'
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_CONTENT_BASE64_CHARS } from '../../src/models/entry.ts'
import { authHeaders, signer, signerFeeds, signerKey } from './signing.ts'
import { rssSampler } from './processes.ts'

export const SIGNERS = 10

export interface PostLoadResult { count: number; prepare_ms: number; elapsed_ms: number; rps: number; statuses: Record<string, number>; p50_ms: number; p99_ms: number; first_error: string | null }

/** Creates the signers' feeds, then runs post-load.ts (its own process) for `count` signed POSTs. */
export async function signedPosts(url: string, count: number): Promise<PostLoadResult & { feed_ids: string[] }> {
  const feedIds = await signerFeeds(url, SIGNERS)
  // At most 1000 active entries per feed: keep below that (the 50 MB upload adds one more to feed 0).
  if (count / SIGNERS > 999) throw new Error(`${count} posts over ${SIGNERS} feeds exceeds the per-feed entry limit`)
  const config = { url, keys: Array.from({ length: SIGNERS }, (_, i) => signerKey(i)), feedIds, count, concurrency: 50 }
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'post-load.ts'), JSON.stringify(config)], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  if ((await proc.exited) !== 0) throw new Error(`post-load exited ${proc.exitCode}: ${err.slice(-1000)}`)
  return { ...(JSON.parse(out.trim().split('\n').pop()!) as PostLoadResult), feed_ids: feedIds }
}

function randomBytes(size: number): Buffer {
  const bytes = Buffer.allocUnsafe(size)
  for (let i = 0; i < size; i += 65536) getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)))
  return bytes
}

const entryBody = (payload: Buffer) => JSON.stringify({ content_base64: payload.toString('base64'), mime_type: 'video/mp4', title: 'bench upload' })

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

/**
 * "50 MB upload": 50 MiB of content is 70 MiB of base64, over the 50 MiB base64 limit of POST entries; so the
 * timed upload is the largest payload the limit allows, and the 50 MiB one is sent afterwards to record its answer.
 */
export async function upload(url: string, pid: number, feedId: string, tmpDir: string) {
  const requestedBytes = 50 * 1024 * 1024
  const allowedBytes = Math.floor(MAX_CONTENT_BASE64_CHARS / 4) * 3
  const payloadBytes = Math.min(requestedBytes, allowedBytes)
  const body = entryBody(randomBytes(payloadBytes))
  const floor = floorMs(body, tmpDir)
  const sampler = rssSampler(pid)
  const result = await post(url, feedId, body)
  const rss = sampler.stop()
  const overLimit = requestedBytes > allowedBytes ? await post(url, feedId, entryBody(randomBytes(requestedBytes))) : null
  return {
    requested_payload_bytes: requestedBytes,
    payload_bytes: payloadBytes,
    body_bytes: body.length,
    limit_base64_chars: MAX_CONTENT_BASE64_CHARS,
    status: result.status,
    ms: result.ms,
    floor_ms: floor,
    ratio_to_floor: result.ms / floor,
    rss_before: rss.before,
    rss_peak: rss.peak,
    rss_growth: rss.growth,
    rss_growth_per_payload: rss.growth / payloadBytes,
    over_limit: overLimit && { payload_bytes: requestedBytes, status: overLimit.status, ms: overLimit.ms },
  }
}
