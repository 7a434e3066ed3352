// A tool's input that is a field of the API is made of the TypeBox model the API validates it with: its bounds are
// read from the model, so a limit changed there is changed here, and the agent is told the API's own limits.
// The models' NUL pattern (models/common.ts) is not carried: the API refuses NUL itself, with its documented 400.
import { z } from 'zod'
import type { TSchema } from '@sinclair/typebox'

/** The model field's member of this JSON type: `T | null` is read as T (a tool's input leaves a field out, never null). */
function member(field: TSchema, type: 'string' | 'array'): TSchema {
  const found = field.type === type ? field : (field.anyOf as TSchema[] | undefined)?.find((option) => option.type === type)
  if (!found) throw new Error(`the model field is not a ${type}`)
  return found
}

/** A string with a model text field's length bounds. */
export function textOf(field: TSchema): z.ZodString {
  const text = member(field, 'string')
  let schema = z.string()
  if (typeof text.minLength === 'number') schema = schema.min(text.minLength)
  if (typeof text.maxLength === 'number') schema = schema.max(text.maxLength)
  return schema
}

/** A list of strings with a model list's bounds: how many items, and each item's length. */
export function listOf(field: TSchema): z.ZodArray<z.ZodString> {
  const list = member(field, 'array')
  let schema = z.array(textOf(list.items as TSchema))
  if (typeof list.maxItems === 'number') schema = schema.max(list.maxItems)
  return schema
}
