import { parseKeyword } from './keywords';

describe('reply keywords', () => {
  it.each([
    ['C', 'confirm'],
    [' yes ', 'confirm'],
    ['Confirm\n', 'confirm'],
    ['x', 'cancel'],
    ['CANCEL', 'cancel'],
    ['stop', 'stop'],
    ['  Start', 'start'],
  ])('%j → %s', (body, action) => {
    expect(parseKeyword(body)?.action).toBe(action);
  });

  it.each(['', 'C please', 'yes!', 'STOPP', 'can cel'])('%j is free text', (body) => {
    expect(parseKeyword(body)).toBeNull();
  });
});
