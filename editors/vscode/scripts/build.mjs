// Bundle src/extension.ts and its dependencies into dist/extension.js (vscode stays external).
// Usage: node scripts/build.mjs [--production]
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");

await esbuild.build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  platform: "node",
  format: "cjs",
  target: "node18",
  external: ["vscode"],
  minify: production,
  sourcemap: !production,
  logLevel: "warning",
});
