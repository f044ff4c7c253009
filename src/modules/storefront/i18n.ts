import Negotiator from 'negotiator';

/** The storefront and order pages speak English (default), French and Arabic (right to left). */
export type Lang = 'en' | 'fr' | 'ar';
export const LANGS: readonly Lang[] = ['en', 'fr', 'ar'];

const en = {
  shop: 'Shop',
  testMode: 'TEST MODE: no real money moves.',
  testWallets: 'Test wallets',
  search: 'Search',
  searchPlaceholder: 'Search products',
  noProducts: 'No products found.',
  outOfStock: 'Out of stock',
  addToCart: 'Add to cart',
  added: 'Added',
  variant: 'Choice',
  options: 'Extras',
  yourPrice: 'Your price (MRU)',
  atLeast: 'at least',
  quantity: 'Quantity',
  cart: 'Your cart',
  cartEmpty: 'Your cart is empty.',
  remove: 'Remove',
  subtotal: 'Total',
  fee: 'Fee',
  totalToPay: 'To pay',
  yourName: 'Your name',
  phone: 'Wallet phone number',
  pin: 'PIN',
  placeOrder: 'Order and pay',
  placing: 'Paying…',
  error: 'Something went wrong. Try again.',
  shopNotFound: 'No shop found.',
  orderTitle: 'Your order',
  orderNotFound: 'No order found.',
  reference: 'Reference',
  status: 'Status',
  paid: 'Paid',
  refunded: 'Refunded',
  reason: 'Reason',
  cancelOrder: 'Cancel the order',
  cancelling: 'Cancelling…',
  confirmCancel: 'Cancel this order? You will be refunded.',
  modification: 'The shop proposes a change',
  newTotal: 'New total',
  toPayNow: 'To pay now',
  toRefund: 'Refunded to you',
  accept: 'Accept',
  decline: 'Decline',
  statusNames: {
    NEW: 'Received',
    PREPARING: 'Being prepared',
    READY: 'Ready',
    PICKED_UP: 'On its way',
    DELIVERED: 'Delivered',
    CANCELLED: 'Cancelled',
    REFUNDED: 'Refunded',
  },
};
export type Dictionary = typeof en;

const fr: Dictionary = {
  shop: 'Boutique',
  testMode: 'MODE TEST : aucun argent réel ne circule.',
  testWallets: 'Portefeuilles de test',
  search: 'Rechercher',
  searchPlaceholder: 'Rechercher un produit',
  noProducts: 'Aucun produit trouvé.',
  outOfStock: 'Épuisé',
  addToCart: 'Ajouter au panier',
  added: 'Ajouté',
  variant: 'Choix',
  options: 'Suppléments',
  yourPrice: 'Votre prix (MRU)',
  atLeast: 'au moins',
  quantity: 'Quantité',
  cart: 'Votre panier',
  cartEmpty: 'Votre panier est vide.',
  remove: 'Retirer',
  subtotal: 'Total',
  fee: 'Frais',
  totalToPay: 'À payer',
  yourName: 'Votre nom',
  phone: 'Numéro du portefeuille',
  pin: 'Code PIN',
  placeOrder: 'Commander et payer',
  placing: 'Paiement…',
  error: 'Une erreur est survenue. Réessayez.',
  shopNotFound: 'Aucune boutique trouvée.',
  orderTitle: 'Votre commande',
  orderNotFound: 'Aucune commande trouvée.',
  reference: 'Référence',
  status: 'État',
  paid: 'Payé',
  refunded: 'Remboursé',
  reason: 'Motif',
  cancelOrder: 'Annuler la commande',
  cancelling: 'Annulation…',
  confirmCancel: 'Annuler cette commande ? Vous serez remboursé.',
  modification: 'La boutique propose une modification',
  newTotal: 'Nouveau total',
  toPayNow: 'À payer maintenant',
  toRefund: 'Remboursé',
  accept: 'Accepter',
  decline: 'Refuser',
  statusNames: {
    NEW: 'Reçue',
    PREPARING: 'En préparation',
    READY: 'Prête',
    PICKED_UP: 'En route',
    DELIVERED: 'Livrée',
    CANCELLED: 'Annulée',
    REFUNDED: 'Remboursée',
  },
};

const ar: Dictionary = {
  shop: 'المتجر',
  testMode: 'وضع الاختبار: لا تتحرك أموال حقيقية.',
  testWallets: 'محافظ الاختبار',
  search: 'بحث',
  searchPlaceholder: 'ابحث عن منتج',
  noProducts: 'لم يتم العثور على منتجات.',
  outOfStock: 'نفد من المخزون',
  addToCart: 'أضف إلى السلة',
  added: 'تمت الإضافة',
  variant: 'الاختيار',
  options: 'الإضافات',
  yourPrice: 'السعر الذي تختاره (أوقية)',
  atLeast: 'على الأقل',
  quantity: 'الكمية',
  cart: 'سلتك',
  cartEmpty: 'سلتك فارغة.',
  remove: 'إزالة',
  subtotal: 'المجموع',
  fee: 'الرسوم',
  totalToPay: 'المبلغ المستحق',
  yourName: 'اسمك',
  phone: 'رقم هاتف المحفظة',
  pin: 'الرمز السري',
  placeOrder: 'اطلب وادفع',
  placing: 'جارٍ الدفع…',
  error: 'حدث خطأ. حاول مرة أخرى.',
  shopNotFound: 'لم يتم العثور على المتجر.',
  orderTitle: 'طلبك',
  orderNotFound: 'لم يتم العثور على الطلب.',
  reference: 'المرجع',
  status: 'الحالة',
  paid: 'المدفوع',
  refunded: 'المسترد',
  reason: 'السبب',
  cancelOrder: 'إلغاء الطلب',
  cancelling: 'جارٍ الإلغاء…',
  confirmCancel: 'هل تريد إلغاء هذا الطلب؟ سيتم رد المبلغ إليك.',
  modification: 'يقترح المتجر تعديلاً',
  newTotal: 'المجموع الجديد',
  toPayNow: 'المبلغ المستحق الآن',
  toRefund: 'المبلغ المسترد لك',
  accept: 'قبول',
  decline: 'رفض',
  statusNames: {
    NEW: 'تم الاستلام',
    PREPARING: 'قيد التحضير',
    READY: 'جاهز',
    PICKED_UP: 'في الطريق',
    DELIVERED: 'تم التسليم',
    CANCELLED: 'ملغى',
    REFUNDED: 'مسترد',
  },
};

export const dictionaries: Record<Lang, Dictionary> = { en, fr, ar };

function isLang(value: string | undefined): value is Lang {
  return value !== undefined && (LANGS as readonly string[]).includes(value);
}

/** `?lang=` first, then the browser's Accept-Language with its q-values, then English. */
export function pickLang(query: string | undefined, acceptLanguage: string | undefined): Lang {
  if (isLang(query)) return query;
  const negotiated = new Negotiator({ headers: { 'accept-language': acceptLanguage ?? '' } }).language([...LANGS]);
  return isLang(negotiated) ? negotiated : 'en';
}

/** Centimes as MRU with 2 decimals, in integer arithmetic: 123456 → "1,234.56". */
export function formatMru(centimes: number): string {
  const sign = centimes < 0 ? '-' : '';
  const value = Math.abs(centimes);
  return `${sign}${Math.floor(value / 100).toLocaleString('en-US')}.${String(value % 100).padStart(2, '0')}`;
}
