// Runs a TypeScript file in a plain Node process (tests that need a real child
// process to kill): every .ts file is transpiled on require with the project's
// compiler options, the way ts-jest does with isolatedModules.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.resolve(__dirname, '../..');
const { config } = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root);
options.sourceMap = false;
options.inlineSourceMap = true;

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions: options, fileName: filename });
  module._compile(outputText, filename);
};
require(path.resolve(process.argv[2]));
