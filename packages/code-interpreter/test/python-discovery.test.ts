import { describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '@quiver/core';
import { findPython, pythonCandidates } from '../src/python-discovery.js';

describe('Python discovery', () => {
  it('tries $QUIVER_PYTHON, then PATH, then /usr/bin/python3', () => {
    const candidates = pythonCandidates({
      QUIVER_PYTHON: '/opt/py/bin/python3',
      PATH: '/nonexistent',
    });
    expect(candidates[0]).toBe('/opt/py/bin/python3');
    expect(candidates).toContain('/usr/bin/python3');
  });

  it('finds a Python that can import ipykernel, skipping ones that cannot', async () => {
    const python = await findPython();
    expect(python.ipykernelVersion).toMatch(/^\d+\.\d+/);
    expect(python.prefixes.length).toBeGreaterThan(0);
  });

  it('refuses an explicit Python without ipykernel, saying how to fix it', async () => {
    await expect(findPython({ python: '/bin/false' })).rejects.toThrow(ConfigurationError);
    await expect(findPython({ python: '/bin/false' })).rejects.toThrow(/ipykernel/);
  });
});
