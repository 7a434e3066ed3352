// An S3-compatible server for tests and trying the S3 content option on one machine: s3rver (a devDependency) on
// 127.0.0.1, a free port, its files in a temporary directory, with bucket `trellis` made. `env` is what a Trellis
// server needs to use it (the credentials s3rver accepts, and TRELLIS_CONTENT_URL).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from 's3rver'

export interface S3Server {
  endpoint: string
  bucket: string
  /** The variables for a server (or a command) with content in this bucket, under `prefix`. */
  env(prefix?: string): Record<string, string>
  stop(): Promise<void>
}

export const S3RVER_CREDENTIALS = { S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' }

export async function startS3(): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'trellis-s3-'))
  const bucket = 'trellis'
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    bucket,
    env: (prefix = 'blocks') => ({
      ...S3RVER_CREDENTIALS,
      TRELLIS_CONTENT_URL: `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1`,
    }),
    async stop() {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

if (import.meta.main) {
  const s3 = await startS3()
  console.log(
    `S3 (s3rver) at ${s3.endpoint}, bucket ${s3.bucket}; for a server: ${Object.entries(s3.env())
      .map(([k, v]) => `${k}='${v}'`)
      .join(' ')}`,
  )
  process.on('SIGTERM', async () => {
    await s3.stop()
    process.exit(0)
  })
}
