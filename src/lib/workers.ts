// Where a worker's entrypoint is. From source: its file under src/. In the compiled binary all modules share one
// bundle under /$bunfs/root/, and each worker is an entrypoint of its own there, by its path from src/
// (scripts/build.ts lists them).
export function workerEntry(pathFromSrc: string): string {
  return import.meta.url.includes('/$bunfs/') ? `./${pathFromSrc}` : new URL(`../${pathFromSrc}`, import.meta.url).href
}
