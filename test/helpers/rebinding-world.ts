// Run inside a private network namespace (see netns.ts): the network a DNS-rebinding attack needs.
//   bun test/helpers/rebinding-world.ts <public address>
// - A DNS server on 127.0.0.1:53. Every name under .rebind.test answers an A record, TTL 0: the public address the
//   first time it is asked, 127.0.0.1 every time after (a classic rebinding name). Other names: NXDOMAIN.
// - On <public address>:8080 an image host: a PNG ("public") for any path; /missing → 404;
//   /to/<name> → 302 to http://<name>:8080/cover.png.
// - On <public address>:8443 the same over https, with a self-signed certificate for *.rebind.test
//   (rebind-test.cert.pem; the server under test trusts it through NODE_EXTRA_CA_CERTS).
// - On 127.0.0.1:8080 the "secret" service the attack wants to reach: it answers a PNG too ("secret"), so a server
//   that reaches it stores it. Every connection it accepts prints a line `secret-connection`.
// - Probe targets on the public address: 8081 answers 200 text/html (an open port, no image), 8082 has no listener
//   (refused), 8083 accepts and resets at once (closed mid-way).
// Prints `ready` once everything listens. Names starting with `loop` always answer 127.0.0.1.
import { createSocket } from 'node:dgram'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

export const TEST_CERT_PATH = `${import.meta.dir}/rebind-test.cert.pem`

export const PUBLIC_PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('public cover')])
export const SECRET_PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('secret from loopback')])

// --- DNS -------------------------------------------------------------------------------------------------------
const timesAsked = new Map<string, number>()

function readName(packet: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = []
  while (packet[offset] !== 0) {
    const length = packet[offset]
    labels.push(packet.subarray(offset + 1, offset + 1 + length).toString('latin1'))
    offset += 1 + length
  }
  return { name: labels.join('.').toLowerCase(), end: offset + 1 }
}

function answer(query: Buffer, publicAddress: string): Buffer {
  const { name, end } = readName(query, 12)
  const type = query.readUInt16BE(end)
  const question = query.subarray(12, end + 4)
  const known = name.endsWith('.rebind.test')
  let record: Buffer | null = null
  if (known && type === 1) {
    const asked = (timesAsked.get(name) ?? 0) + 1
    timesAsked.set(name, asked)
    const address = asked === 1 && !name.startsWith('loop') ? publicAddress : '127.0.0.1'
    console.log(`dns ${name} ${address}`)
    record = Buffer.alloc(16)
    record.writeUInt16BE(0xc00c, 0) // the name, by pointer to the question
    record.writeUInt16BE(1, 2) // A
    record.writeUInt16BE(1, 4) // IN
    record.writeUInt32BE(0, 6) // TTL 0
    record.writeUInt16BE(4, 10)
    Buffer.from(address.split('.').map(Number)).copy(record, 12)
  }
  const header = Buffer.alloc(12)
  query.copy(header, 0, 0, 2) // id
  header.writeUInt16BE(0x8180 | (known ? 0 : 3), 2) // response, recursion desired + available; NXDOMAIN if unknown
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(record ? 1 : 0, 6)
  return Buffer.concat([header, question, ...(record ? [record] : [])])
}

async function main(publicAddress: string) {
  const dns = createSocket('udp4')
  dns.on('message', (query, from) => {
    try {
      dns.send(answer(query, publicAddress), from.port, from.address)
    } catch {
      // a malformed query gets no answer
    }
  })
  await new Promise<void>((resolve) => dns.bind(53, '127.0.0.1', resolve))

  // --- HTTP services ---------------------------------------------------------------------------------------------
  Bun.serve({
    hostname: publicAddress,
    port: 8080,
    fetch(request) {
      const path = new URL(request.url).pathname
      if (path === '/huge') return new Response(Buffer.concat([PUBLIC_PNG, new Uint8Array(11 * 1024 * 1024)]))
      if (path === '/missing') return new Response('no', { status: 404 })
      if (path.startsWith('/to/'))
        return new Response(null, { status: 302, headers: { location: `http://${path.slice(4)}:8080/cover.png` } })
      return new Response(PUBLIC_PNG, { headers: { 'content-type': 'image/png' } })
    },
  })
  Bun.serve({
    hostname: publicAddress,
    port: 8443,
    tls: { cert: readFileSync(TEST_CERT_PATH, 'utf8'), key: readFileSync(`${import.meta.dir}/rebind-test.key.pem`, 'utf8') },
    fetch: () => new Response(PUBLIC_PNG, { headers: { 'content-type': 'image/png' } }),
  })
  Bun.serve({
    hostname: publicAddress,
    port: 8081,
    fetch: () => new Response('<html>an admin page</html>', { headers: { 'content-type': 'text/html' } }),
  })

  const secret = createServer((socket) => {
    console.log('secret-connection')
    socket.on('error', () => {})
    socket.once('data', () => {
      socket.end(
        Buffer.concat([
          Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: ${SECRET_PNG.length}\r\nconnection: close\r\n\r\n`),
          SECRET_PNG,
        ]),
      )
    })
  })
  await new Promise<void>((resolve) => secret.listen(8080, '127.0.0.1', resolve))

  const resetter = createServer((socket) => socket.resetAndDestroy())
  await new Promise<void>((resolve) => resetter.listen(8083, publicAddress, resolve))

  console.log('ready')
}

if (import.meta.main) await main(process.argv[2])
