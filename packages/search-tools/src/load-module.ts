/**
 * @internal Load a dependency on first use. CommonJS hosts (this package's CommonJS build, and
 * test runners such as jest that load it) cannot run `import()` without experimental flags, so
 * there it is `require`; in ES modules it is `import()`.
 */
export async function loadModule<T>(id: string): Promise<T> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS has no flag-free import()
  if (typeof module === 'object' && typeof require === 'function') return require(id) as T;
  return (await import(id)) as T;
}
