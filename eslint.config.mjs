import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', module: 'writable', require: 'readonly', __dirname: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    // Another package's code is used as it is documented, never patched: no assignment to a
    // prototype's members, to Node's module cache, or through a cast (how a module's exports or a
    // private field get written past the types), and no property defined on a prototype.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "AssignmentExpression > MemberExpression.left[object.type='MemberExpression'][object.property.name='prototype']",
          message: "Do not assign to a prototype's members: use the package's documented options or hooks.",
        },
        {
          selector: "AssignmentExpression > MemberExpression.left[property.name='prototype']",
          message: "Do not replace a prototype: use the package's documented options or hooks.",
        },
        {
          selector: "AssignmentExpression > MemberExpression.left[object.object.name='require'][object.property.name='cache']",
          message: "Do not write Node's module cache: load packages as they ship.",
        },
        {
          selector: "AssignmentExpression > MemberExpression.left[object.type='TSAsExpression']",
          message: "Do not write through a cast: another package's exports and private fields are not the gateway's to change.",
        },
        {
          selector: "CallExpression[callee.object.name='Object'][callee.property.name=/^(defineProperty|defineProperties|assign|setPrototypeOf)$/] > MemberExpression:first-child[property.name='prototype']",
          message: "Do not change a prototype: use the package's documented options or hooks.",
        },
      ],
    },
  },
  {
    // Jest's configuration, the build script and the test setup Jest starts are CommonJS, loaded by plain Node.
    files: ['*.js', 'scripts/*.js', 'test/setup/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests read JSON response bodies, whose shape is what they assert.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
