// What sealing paid content costs (content/sealing.ts): a 37 MiB paid entry against the same bytes free, in the same
// run, over HTTP from a spawned server. Downloads cold (the file cache emptied: blocks read, opened when sealed, the
// file written and synced) and warm (the file served); uploads (written to a file as they arrive, then stored once:
// sealed when paid, in the clear when free). Every upload has new bytes. Also AES-256-CTR alone, in this process.
//
//   bun scripts/bench-sealed.ts [rounds=3]
import { closeSync, fsyncSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { startTestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createFeed, newWallet } from '../dev/api.ts'
import { newContentKey, sealer } from '../src/content/sealing.ts'
import { usageOf } from '../dev/usage.ts'

const usage = usageOf('bun scripts/bench-sealed.ts [rounds=3]')
const rounds = Number(process.argv[2] ?? 3)
if (!Number.isInteger(rounds) || rounds < 1) usage('rounds must be a positive integer')

const SIZE = 37 * 1024 * 1024 + 123
/** New random bytes for each upload: nothing of it is stored already (no block found stored, no file cached). */
function randomBytes(): Uint8Array {
  const bytes = new Uint8Array(SIZE)
  for (let offset = 0; offset < SIZE; offset += 65_536) crypto.getRandomValues(bytes.subarray(offset, Math.min(SIZE, offset + 65_536)))
  return bytes
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ms = (values: number[]) => `median ${median(values).toFixed(0)} ms (${values.map((v) => v.toFixed(0)).join(', ')})`

const seal = sealer(newContentKey())
const started = performance.now()
seal(randomBytes())
console.log(`AES-256-CTR over 37 MiB in process: ${(performance.now() - started).toFixed(0)} ms`)

const server = await startTestServer()
try {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  // The floor of scripts/bench/measure-writes.ts: what the server cannot avoid doing with the body.
  const floor = (text: string) => {
    const begun = performance.now()
    const decoded = Buffer.from((JSON.parse(text) as { content_base64: string }).content_base64, 'base64')
    createHash('sha256').update(decoded).digest()
    const fd = openSync(join(server.dataDir, 'floor.bin'), 'w')
    writeSync(fd, decoded)
    fsyncSync(fd)
    closeSync(fd)
    rmSync(join(server.dataDir, 'floor.bin'))
    return performance.now() - begun
  }
  const floors: number[] = []
  const upload = async (paid: boolean) => {
    const text = JSON.stringify({
      content_base64: b64(randomBytes()),
      mime_type: 'video/mp4',
      ...(paid ? { is_free: false, price: { amount: '1000' } } : {}),
    })
    floors.push(floor(text))
    const begun = performance.now()
    const reply = await fetch(`${server.url}/v1/feeds/${feed.id}/entries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await authHeaders(server.url, owner)) },
      body: text,
    })
    if (reply.status !== 201) throw new Error(`upload: ${reply.status} ${await reply.text()}`)
    return { ms: performance.now() - begun, entry: (await reply.json()) as { id: string; cid: string } }
  }
  const uploads = { free: [] as number[], paid: [] as number[] }
  let free = null as null | { id: string }
  let paid = null as null | { id: string }
  for (let round = 0; round < rounds; round++) {
    const f = await upload(false)
    const p = await upload(true)
    uploads.free.push(f.ms)
    uploads.paid.push(p.ms)
    free ??= f.entry
    paid ??= p.entry
  }
  console.log(`upload floor (decode, hash, write + fsync): ${ms(floors)}`)
  console.log(`upload 37 MiB free (file, then stored in the clear): ${ms(uploads.free)}`)
  console.log(`upload 37 MiB paid (file, then stored sealed):       ${ms(uploads.paid)}`)

  const cache = join(server.dataDir, 'cache', 'content')
  const download = async (entry: { id: string }, signed: boolean) => {
    const headers = signed ? await authHeaders(server.url, owner) : {}
    const begun = performance.now()
    const response = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, { headers })
    let n = 0
    for await (const chunk of response.body! as unknown as AsyncIterable<Uint8Array>) n += chunk.byteLength
    if (n !== SIZE) throw new Error(`download: ${n} bytes`)
    return performance.now() - begun
  }
  const reads = { freeCold: [] as number[], paidCold: [] as number[], freeWarm: [] as number[], paidWarm: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    for (const name of readdirSync(cache)) rmSync(join(cache, name))
    reads.freeCold.push(await download(free!, false))
    reads.paidCold.push(await download(paid!, true))
    reads.freeWarm.push(await download(free!, false))
    reads.paidWarm.push(await download(paid!, true))
  }
  console.log(`download 37 MiB free, cold (file written): ${ms(reads.freeCold)}`)
  console.log(`download 37 MiB paid, cold (opened, file written): ${ms(reads.paidCold)}`)
  console.log(`download 37 MiB free, warm (file): ${ms(reads.freeWarm)}`)
  console.log(`download 37 MiB paid, warm (file): ${ms(reads.paidWarm)}`)
  const entries = (await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries?page_size=100`)).body.data.length
  console.log(`(${entries} entries; a paid download's sign-in is done before its clock starts)`)
} finally {
  await server.dispose()
}
