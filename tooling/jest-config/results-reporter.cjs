// Writes <package>/test-results/jest.json (counts per run) so the root test script can print
// one summary line for the whole monorepo. Jest's own --outputFile does not create the folder.
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

class ResultsReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const dir = join(this.rootDir, 'test-results');
    mkdirSync(dir, { recursive: true });
    const failedSuites = results.testResults
      .filter((suite) => suite.testExecError || suite.failureMessage)
      .map((suite) => suite.testFilePath);
    writeFileSync(
      join(dir, 'jest.json'),
      JSON.stringify(
        {
          passed: results.numPassedTests,
          failed: results.numFailedTests,
          skipped: results.numPendingTests + results.numTodoTests,
          suites: results.numTotalTestSuites,
          failedSuites,
          runtimeErrorSuites: results.numRuntimeErrorTestSuites,
        },
        null,
        2,
      ),
    );
  }
}

module.exports = ResultsReporter;
