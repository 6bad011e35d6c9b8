// ESLint flat config: the recommended and type-aware rules of typescript-eslint, over src and tests.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "out/**", "node_modules/**"] },
  js.configs.recommended,
  {
    files: ["**/*.cjs", "**/*.mjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", process: "readonly", __dirname: "readonly", fetch: "readonly", console: "readonly", setTimeout: "readonly" },
    },
  },
  { files: ["**/*.mjs"], languageOptions: { sourceType: "module" } },
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: ["**/*.ts"] })),
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: { project: "./tsconfig.json", tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "off",
      eqeqeq: ["error", "always"],
      "no-console": "error",
      curly: "error",
    },
  },
  {
    files: ["test/**/*.ts"],
    rules: {
      "no-console": "off",
      // node:test's describe/it return promises that the runner itself awaits.
      "@typescript-eslint/no-floating-promises": [
        "error",
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it", "before", "after"] }] },
      ],
    },
  },
);
