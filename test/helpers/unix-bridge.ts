// Run inside a network namespace: relays each connection on a Unix socket (files are shared across namespaces) to
// a TCP address inside it, so a test outside can talk to a server bound to the namespace's own 127.0.0.1.
//   bun test/helpers/unix-bridge.ts <socket path> <port>
import { connect, createServer } from 'node:net'

const [socketPath, port] = process.argv.slice(2)
createServer((client) => {
  const upstream = connect(Number(port), '127.0.0.1')
  client.pipe(upstream).pipe(client)
  const close = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', close).on('close', close)
  upstream.on('error', close).on('close', close)
}).listen(socketPath, () => console.log('bridging'))
