// One HTTP request written as raw bytes on its own TCP connection, for what fetch will not send (no Host header,
// HTTP/1.0, a Host that makes no URL). The answer is read until the server closes the connection.
import { connect } from 'node:net'

export interface RawReply {
  status: number
  headers: Record<string, string>
  body: string
}

export function rawRequest(serverUrl: string, text: string, timeoutMs = 5_000): Promise<RawReply> {
  const { hostname, port } = new URL(serverUrl)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(Number(port), hostname, () => socket.write(text))
    const timer = setTimeout(() => (socket.destroy(), reject(new Error(`no answer to ${JSON.stringify(text.slice(0, 80))}`))), timeoutMs)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', (error) => (clearTimeout(timer), reject(error)))
    socket.on('close', () => {
      clearTimeout(timer)
      const raw = Buffer.concat(chunks).toString('utf8')
      const split = raw.indexOf('\r\n\r\n')
      const [statusLine, ...lines] = raw.slice(0, split).split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim()
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0)
      resolve({ status, headers, body: split < 0 ? '' : raw.slice(split + 4) })
    })
  })
}
