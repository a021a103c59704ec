// Run in a fresh process: imports one entry and prints, as JSON, every package and project file it loaded.
// With a third argument `run`, it then runs one program through the entry's createCodeMode and prints
// what was loaded before and after the first run.
import { registerHooks } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const loaded = new Set<string>();
registerHooks({
  load(url, context, next) {
    // A package.json read is metadata (createCodeMode finds isolated-vm's native build through it), not the package's code.
    if (url.startsWith('file:') && !url.endsWith('/package.json')) {
      const path = fileURLToPath(url);
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
      if (pkg !== null) loaded.add(pkg[1]);
      else if (path.startsWith(root)) loaded.add(path.slice(root.length));
    }
    return next(url, context);
  },
});
const entry = await import(pathToFileURL(process.argv[2]).href);
const imported = [...loaded].sort();
if (process.argv[3] !== 'run') {
  console.log(JSON.stringify(imported));
} else {
  const registry = entry.createToolRegistry({ eventSink: entry.createMemoryEventSink() });
  const codeMode = entry.createCodeMode({ registry });
  const created = [...loaded].sort();
  const result = await registry.dispatch({ name: 'run_code', arguments: { code: 'return 6 * 7', description: 'probe' } });
  await codeMode.close();
  console.log(JSON.stringify({ imported, created, ran: [...loaded].sort(), value: result.value }));
}
