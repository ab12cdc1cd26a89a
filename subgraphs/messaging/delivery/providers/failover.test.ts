import { TestClock } from '../../../../test/support/clock';
import { closedPort, fakeTwilio, fakeVonage, type FakeSmsProvider } from '../../../../test/support/sms-fakes';
import { FailoverProvider, type CircuitState, type ProviderSendOutcome } from './failover';
import { ProviderError, type OutboundMessage } from './provider';
import { TwilioProvider } from './twilio';
import { VonageProvider } from './vonage';

const SID = 'AC0123456789';
const message = (to: string): OutboundMessage => ({ messageId: `m-${to}`, channel: 'sms', to, subject: null, body: 'Your appointment is at 09:30' });

/** Twilio then Vonage, real clients against fake APIs on real ports, behind breakers on a test clock. */
describe('SMS provider failover and circuit breakers', () => {
  let twilio: FakeSmsProvider;
  let vonage: FakeSmsProvider;
  const clock = new TestClock();
  let outcomes: string[];
  let states: Map<string, CircuitState>;

  beforeAll(async () => {
    [twilio, vonage] = await Promise.all([fakeTwilio(SID), fakeVonage('key', 'secret')]);
  });
  afterAll(async () => {
    await Promise.all([twilio?.close(), vonage?.close()]);
  });

  /** `twilioTimeoutMs`: how long a hanging Twilio is waited for; Vonage is given ample time, so a busy machine does not fail it. */
  const chain = (twilioUrl = twilio.url, twilioTimeoutMs = 10_000) => {
    outcomes = [];
    states = new Map();
    twilio.mode = 'ok';
    vonage.mode = 'ok';
    return new FailoverProvider(
      [
        new TwilioProvider({ accountSid: SID, authToken: 'token', from: '+15550001111', apiUrl: twilioUrl, timeoutMs: twilioTimeoutMs }),
        new VonageProvider({ apiKey: 'key', apiSecret: 'secret', from: 'Clinic', apiUrl: vonage.url, timeoutMs: 10_000 }),
      ],
      'sms',
      { failureThreshold: 2, cooldownMs: 30_000 },
      clock,
      {
        sendOutcome: (provider: string, _channel: string, outcome: ProviderSendOutcome) => outcomes.push(`${provider} ${outcome}`),
        circuitState: (provider: string, _channel: string, state: CircuitState) => states.set(provider, state),
      },
    );
  };

  it('sends through the first provider while it works', async () => {
    const sms = chain();
    const result = await sms.send(message('+31612345671'));
    expect(result.provider).toBe('twilio');
    expect(result.providerMessageId).toMatch(/^SM/);
    expect(outcomes).toEqual(['twilio sent']);
  });

  it.each([
    ['answers 503', 'unavailable' as const],
    ['does not answer in time', 'hang' as const],
  ])('moves a send to the next provider when the first %s', async (_what, mode) => {
    const sms = chain(twilio.url, 500);
    twilio.mode = mode;
    const before = vonage.calls.length;
    const result = await sms.send(message('+31612345672'));
    expect(result.provider).toBe('vonage');
    expect(vonage.calls.length).toBe(before + 1);
    const form = vonage.calls.at(-1)!;
    expect(form.get('to')).toBe('31612345672');
    expect(form.get('from')).toBe('Clinic');
    expect(form.get('client-ref')).toBe('m-+31612345672');
    expect(outcomes).toEqual(['twilio failed', 'vonage sent']);
  });

  it('[MSG-017] moves a send to the next provider when the first refuses connections', async () => {
    const sms = chain(`http://127.0.0.1:${await closedPort()}`);
    expect((await sms.send(message('+31612345673'))).provider).toBe('vonage');
  });

  it('[MSG-017] fails a message the provider rejects for its number, without passing it on', async () => {
    const sms = chain();
    const before = vonage.calls.length;
    const err = await sms.send(message('+31600000000')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).permanent).toBe(true);
    expect((err as ProviderError).message).toMatch(/^RECIPIENT_INVALID: Twilio 400 code 21211/);
    expect(vonage.calls.length).toBe(before);
    expect(outcomes).toEqual(['twilio rejected']);
    expect(states.get('twilio')).toBe('closed');

    // The same from Vonage, when it is the one asked.
    twilio.mode = 'unavailable';
    const vonageErr = (await sms.send(message('+31600000000')).catch((e: unknown) => e)) as ProviderError;
    expect(vonageErr.permanent).toBe(true);
    expect(vonageErr.message).toMatch(/^RECIPIENT_INVALID: Vonage status 6/);
  });

  it('[MSG-018] opens the circuit after the threshold, skips the provider for the cool-down, then probes it', async () => {
    const sms = chain();
    twilio.mode = 'unavailable';
    await sms.send(message('+31612345674'));
    expect(states.get('twilio')).toBe('closed');
    await sms.send(message('+31612345675'));
    expect(states.get('twilio')).toBe('open');
    outcomes = [];
    twilio.mode = 'ok';
    const skipped = twilio.calls.length;
    expect((await sms.send(message('+31612345676'))).provider).toBe('vonage');
    expect(outcomes).toEqual(['twilio skipped', 'vonage sent']);
    expect(twilio.calls.length).toBe(skipped);

    // After the cool-down one probe goes through; it fails, so the circuit opens again.
    clock.advance(30_000);
    twilio.mode = 'unavailable';
    outcomes = [];
    await sms.send(message('+31612345677'));
    expect(outcomes).toEqual(['twilio failed', 'vonage sent']);
    expect(states.get('twilio')).toBe('open');

    // The next probe succeeds and closes it.
    clock.advance(30_000);
    twilio.mode = 'ok';
    expect((await sms.send(message('+31612345678'))).provider).toBe('twilio');
    expect(states.get('twilio')).toBe('closed');
    expect(sms.circuits()).toEqual([
      { provider: 'twilio', channel: 'sms', state: 'closed' },
      { provider: 'vonage', channel: 'sms', state: 'closed' },
    ]);
  });

  it('[MSG-018] lets one probe through at a time while half-open', async () => {
    const sms = chain(twilio.url, 500);
    twilio.mode = 'unavailable';
    await sms.send(message('+31612345679'));
    await sms.send(message('+31612345680'));
    clock.advance(30_000);
    twilio.mode = 'hang';
    outcomes = [];
    const [probe, other] = await Promise.all([sms.send(message('+31612345681')), sms.send(message('+31612345682'))]);
    expect([probe.provider, other.provider]).toEqual(['vonage', 'vonage']);
    expect(outcomes.filter((o) => o.startsWith('twilio')).sort()).toEqual(['twilio failed', 'twilio skipped']);
  });

  it('is a transient error when no provider took the message', async () => {
    const sms = chain();
    twilio.mode = 'unavailable';
    vonage.mode = 'unavailable';
    const err = (await sms.send(message('+31612345683')).catch((e: unknown) => e)) as ProviderError;
    expect(err.permanent).toBe(false);
    expect(err.message).toMatch(/^PROVIDER_ERROR: no provider took the message \(twilio: Twilio 503.*; vonage: Vonage answered 503\)/);
  });
});
