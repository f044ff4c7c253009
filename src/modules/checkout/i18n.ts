/** The hosted pages speak English (default), French and Arabic (right to left). */
export type Lang = 'en' | 'fr' | 'ar';

const en = {
  title: 'Pay',
  testMode: 'TEST MODE: no real money moves.',
  testWallets: 'Test wallets',
  merchant: 'Merchant',
  amount: 'Amount',
  amountToPay: 'Amount to pay (MRU)',
  fee: 'Fee',
  phone: 'Wallet phone number',
  pin: 'PIN',
  pay: 'Pay',
  paying: 'Paying…',
  cancel: 'Cancel',
  paid: 'Payment received',
  receipt: 'Receipt',
  reference: 'Reference',
  paidAt: 'Paid at',
  payer: 'Paid from',
  redirecting: 'Returning to the merchant…',
  expired: 'This payment request has expired.',
  cancelled: 'This payment request was cancelled.',
  refunded: 'This payment was refunded.',
  alreadyPaid: 'This payment request is already paid.',
  notFound: 'No payment request found.',
  codeTitle: 'Pay with a code',
  code: '6-digit payment code',
  find: 'Continue',
  error: 'Something went wrong. Try again.',
};
type Dictionary = typeof en;

const fr: Dictionary = {
  title: 'Payer',
  testMode: 'MODE TEST : aucun argent réel ne circule.',
  testWallets: 'Portefeuilles de test',
  merchant: 'Marchand',
  amount: 'Montant',
  amountToPay: 'Montant à payer (MRU)',
  fee: 'Frais',
  phone: 'Numéro du portefeuille',
  pin: 'Code PIN',
  pay: 'Payer',
  paying: 'Paiement…',
  cancel: 'Annuler',
  paid: 'Paiement reçu',
  receipt: 'Reçu',
  reference: 'Référence',
  paidAt: 'Payé le',
  payer: 'Payé depuis',
  redirecting: 'Retour chez le marchand…',
  expired: 'Cette demande de paiement a expiré.',
  cancelled: 'Cette demande de paiement a été annulée.',
  refunded: 'Ce paiement a été remboursé.',
  alreadyPaid: 'Cette demande de paiement est déjà payée.',
  notFound: 'Aucune demande de paiement trouvée.',
  codeTitle: 'Payer avec un code',
  code: 'Code de paiement à 6 chiffres',
  find: 'Continuer',
  error: 'Une erreur est survenue. Réessayez.',
};

const ar: Dictionary = {
  title: 'الدفع',
  testMode: 'وضع الاختبار: لا تتحرك أموال حقيقية.',
  testWallets: 'محافظ الاختبار',
  merchant: 'التاجر',
  amount: 'المبلغ',
  amountToPay: 'المبلغ المراد دفعه (أوقية)',
  fee: 'الرسوم',
  phone: 'رقم هاتف المحفظة',
  pin: 'الرمز السري',
  pay: 'ادفع',
  paying: 'جارٍ الدفع…',
  cancel: 'إلغاء',
  paid: 'تم استلام الدفع',
  receipt: 'الإيصال',
  reference: 'المرجع',
  paidAt: 'تاريخ الدفع',
  payer: 'دُفع من',
  redirecting: 'العودة إلى التاجر…',
  expired: 'انتهت صلاحية طلب الدفع هذا.',
  cancelled: 'تم إلغاء طلب الدفع هذا.',
  refunded: 'تم استرداد هذا الدفع.',
  alreadyPaid: 'طلب الدفع هذا مدفوع بالفعل.',
  notFound: 'لم يتم العثور على طلب دفع.',
  codeTitle: 'الدفع بالرمز',
  code: 'رمز الدفع المكون من 6 أرقام',
  find: 'متابعة',
  error: 'حدث خطأ. حاول مرة أخرى.',
};

export const dictionaries: Record<Lang, Dictionary> = { en, fr, ar };

/** `?lang=` first, then the browser's Accept-Language, then English. */
export function pickLang(query: string | undefined, acceptLanguage: string | undefined): Lang {
  if (query === 'fr' || query === 'ar' || query === 'en') return query;
  for (const part of (acceptLanguage ?? '').split(',')) {
    const tag = part.trim().slice(0, 2).toLowerCase();
    if (tag === 'fr' || tag === 'ar' || tag === 'en') return tag;
  }
  return 'en';
}

/** Centimes as MRU with 2 decimals, in integer arithmetic: 123456 → "1,234.56". */
export function formatMru(centimes: number): string {
  const whole = Math.floor(centimes / 100);
  const cents = String(centimes % 100).padStart(2, '0');
  return `${whole.toLocaleString('en-US')}.${cents}`;
}
