// WebSub's names: the hub of this server and its topics (a public feed in one format), all absolute from the
// configured public URL, never from a request's Host.
import { isUuid } from '../lib/ids.ts'
import { TOPIC_FORMATS, type TopicFormat } from '../models/websub.ts'

export const hubUrl = (base: string) => `${base}/v1/websub`
export const topicUrl = (base: string, feedId: string, format: TopicFormat) => `${base}/v1/feeds/${feedId}/${format}`
/** The Link header of a topic's document: the hub, and the topic itself. */
export const topicLinks = (base: string, feedId: string, format: TopicFormat) =>
  `<${hubUrl(base)}>; rel="hub", <${topicUrl(base, feedId, format)}>; rel="self"`

/** The feed and format a topic URL names, or null when it is not one of this server's public feeds. */
export function parseTopic(raw: string, base: string): { feed_id: string; format: TopicFormat } | null {
  let url: URL
  let root: URL
  try {
    url = new URL(raw)
    root = new URL(base)
  } catch {
    return null
  }
  if (url.origin !== root.origin || url.search || url.hash || url.username || url.password) return null
  const prefix = `${root.pathname.replace(/\/$/, '')}/v1/feeds/`
  if (!url.pathname.startsWith(prefix)) return null
  const [id, format, ...rest] = url.pathname.slice(prefix.length).split('/')
  if (rest.length || !id || !isUuid(id) || !TOPIC_FORMATS.includes(format as TopicFormat)) return null
  return { feed_id: id.toLowerCase(), format: format as TopicFormat }
}
