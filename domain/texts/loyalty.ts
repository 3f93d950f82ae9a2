// Display texts of the loyalty operations in the two languages of the service. They are for
// people only: clients decide by codes and control fields, never by these strings.

export type Lang = 'ru' | 'en';

type Text = Record<Lang, string>;

/** Reasons a customer can give when blocking a card, in display order (GET block-reasons/). */
export const BLOCK_REASONS: { key: string; label: Text }[] = [
  { key: 'lost', label: { en: 'Card lost', ru: 'Карта потеряна' } },
  { key: 'stolen', label: { en: 'Card stolen', ru: 'Карта украдена' } },
  { key: 'damaged', label: { en: 'Card damaged', ru: 'Карта повреждена' } },
  { key: 'other', label: { en: 'Other reason', ru: 'Другая причина' } },
];

const PROVIDER_BLOCK: Text = { en: 'Blocked by the loyalty program', ru: 'Заблокирована программой лояльности' };

/** The label of a block reason key; the provider's own reason is not in the customer's list. */
export function blockReasonLabel(key: string, lang: Lang): string {
  if (key === 'provider') return PROVIDER_BLOCK[lang];
  return BLOCK_REASONS.find((r) => r.key === key)?.label[lang] ?? key;
}

const MESSAGES = {
  walletAccepted: { en: 'We are setting up your loyalty card', ru: 'Мы оформляем вашу карту лояльности' },
  walletUnchanged: { en: 'Your loyalty card is already set up', ru: 'Карта лояльности уже оформлена' },
  walletRetry: { en: 'We are trying to set up your loyalty card again', ru: 'Пробуем оформить карту лояльности ещё раз' },
  accountSwitched: { en: 'Account switched', ru: 'Счёт переключён' },
  accountUnchanged: { en: 'This account is already active', ru: 'Этот счёт уже выбран' },
  cardBlocked: { en: 'Card blocked', ru: 'Карта заблокирована' },
  cardAlreadyBlocked: { en: 'The card is already blocked', ru: 'Карта уже заблокирована' },
  cardUnblocked: { en: 'Card unblocked', ru: 'Карта разблокирована' },
  cardNotBlocked: { en: 'The card is not blocked', ru: 'Карта не заблокирована' },
  cardLinked: { en: 'Card linked', ru: 'Карта привязана' },
  cardAlreadyLinked: { en: 'This card is already in your wallet', ru: 'Эта карта уже в вашем кошельке' },
  physicalIssued: { en: 'Your physical card is ready to use', ru: 'Пластиковая карта готова к использованию' },
  cardReplaced: { en: 'You have a new card', ru: 'Вы получили новую карту' },
  commandAccepted: { en: 'Your request is being processed', ru: 'Запрос обрабатывается' },
} satisfies Record<string, Text>;

export type MessageKey = keyof typeof MESSAGES;
export const message = (key: MessageKey, lang: Lang): string => MESSAGES[key][lang];

/** Texts of the link previews, by status (and whether the paired command would accept). */
export function linkPreviewMessage(
  status: string,
  canLink: boolean,
  reason: string | null,
  lang: Lang,
  transfer: string | null,
): string | null {
  if (reason === 'WALLET_SYNC_IN_PROGRESS') {
    return lang === 'ru' ? 'Дождитесь окончания настройки карты лояльности' : 'Wait until your loyalty card is set up';
  }
  const texts: Record<string, Text> = {
    ISSUED: canLink
      ? { en: 'This card can be linked to your wallet', ru: 'Эту карту можно привязать' }
      : { en: 'This card is already issued. Link it as an existing card', ru: 'Эта карта уже выпущена. Привяжите её как существующую' },
    NOT_ISSUED: canLink
      ? transfer && transfer !== '0.00'
        ? {
            en: `This card can be issued to you. Your ${transfer} points will move to it.`,
            ru: `Эту карту можно выпустить для вас. На неё перейдут ваши ${transfer} баллов.`,
          }
        : { en: 'This card can be issued to you', ru: 'Эту карту можно выпустить для вас' }
      : {
          en: 'This card has not been issued yet. Issue it as a new physical card',
          ru: 'Эта карта ещё не выпущена. Оформите её как новую пластиковую карту',
        },
    ALREADY_LINKED: { en: 'This card is already yours', ru: 'Эта карта уже ваша' },
    OWNED_BY_ANOTHER_CUSTOMER: { en: 'This card belongs to another customer.', ru: 'Эта карта принадлежит другому покупателю.' },
    BLOCKED: { en: 'This card is blocked', ru: 'Эта карта заблокирована' },
    NOT_FOUND: { en: 'No card has this number', ru: 'Карта с таким номером не найдена' },
  };
  return texts[status]?.[lang] ?? null;
}

/** Messages of a failed synchronization, by LoyaltyWalletSyncErrorSchema `code`. */
export function syncErrorMessage(code: string, lang: Lang): string {
  const texts: Record<string, Text> = {
    PROVIDER_UNAVAILABLE: {
      en: 'The loyalty service did not answer. Try again later.',
      ru: 'Сервис лояльности не ответил. Попробуйте позже.',
    },
    PROVIDER_REJECTED: {
      en: 'The loyalty service could not register you. Contact support.',
      ru: 'Сервис лояльности не смог вас зарегистрировать. Обратитесь в поддержку.',
    },
    CARD_ISSUE_FAILED: { en: 'We could not issue a card for you. Try again later.', ru: 'Не удалось выпустить карту. Попробуйте позже.' },
  };
  return (texts[code] ?? texts.PROVIDER_UNAVAILABLE!)[lang];
}

/** Display text of a point movement (TransactionSchema.description). */
export function transactionDescription(
  t: { type: string; order_no: number | null; shop_name: string | null; comment: string | null },
  lang: Lang,
): string {
  const ru = lang === 'ru';
  switch (t.type) {
    case 'accrual':
      if (t.order_no !== null) return ru ? `Баллы за заказ № ${t.order_no}` : `Points for order No. ${t.order_no}`;
      if (t.shop_name) return ru ? `Баллы за покупку в магазине ${t.shop_name}` : `Points for a purchase in store ${t.shop_name}`;
      return t.comment ?? (ru ? 'Начисление баллов' : 'Points earned');
    case 'redemption':
      if (t.order_no !== null) return ru ? `Оплата баллами заказа № ${t.order_no}` : `Points spent on order No. ${t.order_no}`;
      if (t.shop_name) return ru ? `Списание баллов в магазине ${t.shop_name}` : `Points spent in store ${t.shop_name}`;
      return ru ? 'Списание баллов' : 'Points spent';
    case 'expiry':
      return ru ? 'Сгорание баллов' : 'Points expired';
    default:
      return t.comment
        ? ru
          ? `Корректировка: ${t.comment}`
          : `Adjustment: ${t.comment}`
        : ru
          ? 'Корректировка баллов'
          : 'Points adjustment';
  }
}

/** Name of the points rule of the discount preview (LoyaltyAppliedDiscountSchema). */
export const baseAccrualName = (tier: string, percent: string, lang: Lang): string =>
  lang === 'ru' ? `${tier}: ${trimPercent(percent)}% баллами` : `${tier}: ${trimPercent(percent)}% back in points`;

const trimPercent = (p: string) => (p.includes('.') ? p.replace(/0+$/, '').replace(/\.$/, '') : p);
