// Bundles the widgets' modules and style sheets (src/) with esbuild into forge_kernel/widgets/bundle/, the files the
// Python package ships and _frontend.py reads; `node scripts/build.mjs --outdir DIR` writes elsewhere (the test
// builds into a temporary folder and compares it with the committed files, byte for byte).
//
// White space is minified and nothing else: the names stay as written (but where two modules' names meet, esbuild
// renames one), so a stack trace reads as the source; each file is one long line under the note, so that no tool
// that compares lines takes the bundle for a copy of its sources.
import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as esbuild from "esbuild";

const HERE = dirname(dirname(fileURLToPath(import.meta.url)));
const SRC = join(HERE, "src");
const BUNDLE = join(dirname(HERE), "forge_kernel", "widgets", "bundle");
/** The files the package ships: each widget's module and sheet (common.js / common.css imported into each), the
 * static page's loader, and the designer's sheet. */
export const ENTRIES = ["player.js", "failures.js", "dashboard.js", "static.js",
  "player.css", "failures.css", "dashboard.css", "designer.css"];
const NOTE = "Built by frontend/scripts/build.mjs from frontend/src/ (npm run build): edit the sources, not this file.";

const { values } = parseArgs({ options: { outdir: { type: "string" } } });
const outdir = values.outdir ?? BUNDLE;
for (const name of readdirSync(outdir, { withFileTypes: true })) {
  if (name.isFile() && !ENTRIES.includes(name.name)) rmSync(join(outdir, name.name)); // a file no longer built
}
await esbuild.build({
  entryPoints: ENTRIES.map((name) => join(SRC, name)),
  outdir,
  bundle: true,
  format: "esm",
  minifyWhitespace: true,
  legalComments: "none",
  banner: { js: `// ${NOTE}`, css: `/* ${NOTE} */` },
  logLevel: "warning",
});
