// Files embedded with `import … with { type: 'file' }` resolve to a path (inside the binary once compiled).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
// The pages' style, imported `with { type: 'text' }` (pages/assets.ts).
declare module '*.css' {
  const text: string
  export default text
}
// The favicon, imported `with { type: 'text' }` (pages/assets.ts).
declare module '*.svg' {
  const text: string
  export default text
}
