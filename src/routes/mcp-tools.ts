// The tools of POST /mcp in x402 discovery's forms (chain/x402/mcp-discovery.ts): the v2 list's items and the
// manifest's, at this server's public URL. They change only with the code, so they are as old as the process.
import type { Services } from './services.ts'
import { mcpTools } from '../mcp/tool-list.ts'
import { mcpItem, mcpManifestItem } from '../chain/x402/mcp-discovery.ts'
import { nowSeconds } from '../lib/clock.ts'

const SINCE = nowSeconds()
const endpoint = (s: Pick<Services, 'publicUrl'>) => `${s.publicUrl()}/mcp`

export const toolItems = async (s: Pick<Services, 'publicUrl'>) => (await mcpTools()).map((tool) => mcpItem(endpoint(s), tool, SINCE))
export const toolManifestItems = async (s: Pick<Services, 'publicUrl'>) =>
  (await mcpTools()).map((tool) => mcpManifestItem(endpoint(s), tool))
