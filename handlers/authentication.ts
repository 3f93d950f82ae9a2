// Handlers of the Authentication tag: one-time codes, PIN sign-in, token refresh and verify,
// PIN recovery. Each reads its input, calls one use case of services/sign-in/ and shapes the reply.
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { sendCode, signInWithCode, verifyCode, verifyRecoveryCode, type CodeSent } from '../services/sign-in/codes.js';
import { tokenPairByPin, updatePinWithRecovery } from '../services/sign-in/pin.js';
import { refreshCustomerTokens, verifyCustomerToken } from '../services/sign-in/tokens.js';

const codeSentReply = (sent: CodeSent) => ({
  status: 200 as const,
  body: {
    message: 'Code sent',
    data: { resend_after_seconds: sent.resendAfterSeconds, expires_in_seconds: sent.expiresInSeconds, code_length: sent.codeLength },
  },
});

export const authenticationHandlers = {
  // POST /api/auth/otp/send
  sendOtp: async (ctx) => codeSentReply(await sendCode(ctx.deps, ctx.body.phone, 'login', ctx.lang)),

  // POST /api/auth/otp/confirm
  confirmOtp: async (ctx) => {
    const { phone, code } = ctx.body;
    const { pair, isNewUser, hasPin } = await signInWithCode(ctx.deps, phone, code, ctx.lang);
    return { status: 200, body: { access: pair.access, refresh: pair.refresh, phone, is_new_user: isNewUser, has_pin: hasPin } };
  },

  // POST /api/auth/otp/verify: checks a code without using it up and issues nothing.
  verifyOtp: async (ctx) => {
    const { phone, code } = ctx.body;
    const checked = await verifyCode(ctx.deps, phone, code);
    return {
      status: 200,
      body: { phone, verified: true as const, is_new_user: checked.isNewUser, expires_at: checked.expiresAt.toISOString() },
    };
  },

  // POST /api/auth/otp/update-pin/send
  sendPinRecoveryOtp: async (ctx) => codeSentReply(await sendCode(ctx.deps, ctx.body.phone, 'update_pin', ctx.lang)),

  // POST /api/auth/otp/update-pin/verify: a correct code buys a single-use recovery token.
  verifyPinRecoveryOtp: async (ctx) => {
    const { phone, code } = ctx.body;
    const token = await verifyRecoveryCode(ctx.deps, phone, code);
    return { status: 200, body: { phone, token } };
  },

  // PATCH /api/auth/recovery/update-pin (X-Recovery-Key)
  updatePin: async (ctx) => {
    const { password, password_repeat } = ctx.body;
    const { phone, pair } = await updatePinWithRecovery(ctx.deps, String(ctx.transport.recoveryKey), password, password_repeat);
    return { status: 200, body: { phone, refresh: pair.refresh, access: pair.access } };
  },

  // POST /api/token/pair: phone + PIN.
  obtainTokenPair: async (ctx) => {
    const { phone, password } = ctx.body;
    const pair = await tokenPairByPin(ctx.deps, phone, password);
    return { status: 200, body: { phone, refresh: pair.refresh, access: pair.access } };
  },

  // POST /api/token/refresh
  refreshToken: async (ctx) => {
    const pair = await refreshCustomerTokens(ctx.deps, ctx.body.refresh);
    return { status: 200, body: { refresh: pair.refresh, access: pair.access } };
  },

  // POST /api/token/verify
  verifyToken: async (ctx) => {
    await verifyCustomerToken(ctx.deps, ctx.body.token);
    return { status: 200, body: {} };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const authenticationSteps: StepsMap = {
  sendOtp: { limitPerClientIp: true },
  confirmOtp: { limitPerClientIp: true, noStore: true },
  verifyOtp: { limitPerClientIp: true },
  sendPinRecoveryOtp: { limitPerClientIp: true },
  verifyPinRecoveryOtp: { limitPerClientIp: true, noStore: true },
  updatePin: { noStore: true },
  obtainTokenPair: { limitPerClientIp: true, noStore: true },
  refreshToken: { limitPerClientIp: true, noStore: true },
  verifyToken: { limitPerClientIp: true },
};
