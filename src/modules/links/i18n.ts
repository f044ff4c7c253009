import { defineDictionaries } from '../../lib/i18n.js';

/**
 * The texts of a payment link's page and poster that the checkout's dictionaries do not already
 * have (the wallet form, its errors, the test-mode banner and the receipt are the checkout's, read
 * from `checkoutDictionaries`), in English, French and Arabic. `{name}` is a placeholder.
 */
export const linkPageDictionaries = defineDictionaries({
  en: {
    linkNotFound: 'No payment link here.',
    linkNotFoundNext: 'Check the link you were given, or ask the shop to send it again.',
    amountOfChoice: 'Amount of your choice',
    amountBetween: 'From {min} to {max}',
    amountAtLeast: 'At least {min}',
    amountAtMost: 'At most {max}',
    payerName: 'Your name',
    payerNote: 'Note (optional)',
    errNameRequired: 'Enter your name.',
    errNoteTooLong: 'The note is too long.',
    inactive: 'This payment link is not active.',
    inactiveMessage: 'Message from {merchant}:',
    completed: 'This payment link is no longer available: it has received all its payments.',
    expired: 'This payment link has expired.',
    notTaking: '{merchant} is not taking payments through this link right now.',
    askMerchant: 'Ask {merchant} for another way to pay.',
    errUnavailable: 'This payment link is no longer available. Nothing was charged.',
    posterTitle: 'Poster: {label}',
    scanToPay:
      'Scan the code with your phone’s camera, or open the address below, then pay with your wallet phone number and PIN.',
    qrAlt: 'QR code of the payment link',
    printHint: 'Print this page on A5 paper.',
  },
  fr: {
    linkNotFound: 'Aucun lien de paiement ici.',
    linkNotFoundNext: 'Vérifiez le lien reçu, ou demandez à la boutique de vous le renvoyer.',
    amountOfChoice: 'Montant de votre choix',
    amountBetween: 'De {min} à {max}',
    amountAtLeast: 'Au moins {min}',
    amountAtMost: 'Au plus {max}',
    payerName: 'Votre nom',
    payerNote: 'Note (facultative)',
    errNameRequired: 'Saisissez votre nom.',
    errNoteTooLong: 'La note est trop longue.',
    inactive: 'Ce lien de paiement n’est pas actif.',
    inactiveMessage: 'Message de {merchant} :',
    completed: 'Ce lien de paiement n’est plus disponible : il a reçu tous ses paiements.',
    expired: 'Ce lien de paiement a expiré.',
    notTaking: '{merchant} n’accepte pas de paiement par ce lien pour le moment.',
    askMerchant: 'Demandez à {merchant} un autre moyen de payer.',
    errUnavailable: 'Ce lien de paiement n’est plus disponible. Rien n’a été débité.',
    posterTitle: 'Affiche : {label}',
    scanToPay:
      'Scannez le code avec l’appareil photo de votre téléphone, ou ouvrez l’adresse ci-dessous, puis payez avec le numéro et le code secret de votre portefeuille.',
    qrAlt: 'Code QR du lien de paiement',
    printHint: 'Imprimez cette page sur du papier A5.',
  },
  ar: {
    linkNotFound: 'لا يوجد رابط دفع هنا.',
    linkNotFoundNext: 'تحقق من الرابط الذي استلمته، أو اطلب من المتجر أن يرسله إليك مجدداً.',
    amountOfChoice: 'المبلغ الذي تختاره',
    amountBetween: 'من {min} إلى {max}',
    amountAtLeast: '{min} على الأقل',
    amountAtMost: '{max} على الأكثر',
    payerName: 'اسمك',
    payerNote: 'ملاحظة (اختيارية)',
    errNameRequired: 'أدخل اسمك.',
    errNoteTooLong: 'الملاحظة طويلة جدًا.',
    inactive: 'رابط الدفع هذا غير مفعّل.',
    inactiveMessage: 'رسالة من {merchant}:',
    completed: 'رابط الدفع هذا لم يعد متاحاً: لقد استلم كل دفعاته.',
    expired: 'انتهت صلاحية رابط الدفع هذا.',
    notTaking: 'لا يقبل {merchant} الدفع عبر هذا الرابط حالياً.',
    askMerchant: 'اطلب من {merchant} طريقة أخرى للدفع.',
    errUnavailable: 'رابط الدفع هذا لم يعد متاحاً. لم يُخصم أي مبلغ.',
    posterTitle: 'ملصق: {label}',
    scanToPay: 'امسح الرمز بكاميرا هاتفك، أو افتح العنوان أدناه، ثم ادفع برقم هاتف محفظتك ورمزها السري.',
    qrAlt: 'رمز QR لرابط الدفع',
    printHint: 'اطبع هذه الصفحة على ورق A5.',
  },
});

export type LinkPageText = keyof (typeof linkPageDictionaries)['en'];
