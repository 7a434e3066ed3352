// Loaded before every test file (bunfig.toml). bunfig's `timeout` covers tests only: hooks kept Bun's 5 s, and a
// beforeAll that starts a server (or migrates the PostgreSQL test template after a schema change) on a busy 2-core
// machine can take longer. setDefaultTimeout covers both.
import { setDefaultTimeout } from 'bun:test'

setDefaultTimeout(60_000)
