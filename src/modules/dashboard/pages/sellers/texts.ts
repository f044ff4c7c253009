import { defineDictionaries } from '../../../../lib/i18n.js';

/**
 * The Sellers pages' own words in every language (the words pages share are in texts/). A seller
 * sells under the business (a stall of a market, a teacher of a school): its share of a payment
 * goes to its own balance, less the business's commission.
 */
export const sellerTexts = defineDictionaries({
  en: {
    newSeller: 'New seller',
    sellersIntro:
      'The people or shops you sell for. Each seller has its own balance, paid out to its phone; the business keeps its commission of what the seller sells.',
    noSellers: 'No sellers yet.',
    noSellerMatches: 'No seller has this status.',
    sellerPhone: 'Phone (where its payouts go)',
    sellerPhoneHint: '8 digits for a Mauritanian number ({example}), or + and the country code.',
    sellerCommission: 'Commission (%)',
    sellerCommissionHint: 'What the business keeps of what the seller sells: 0 to 100, with up to 2 decimals.',
    sellerCommissionShort: 'Commission',
    sellerStatusActive: 'Active',
    sellerStatusDisabled: 'Disabled',
    sellerStatusHint: 'A disabled seller takes no new sale; it keeps its balance and can still be paid out.',
    sellerId: 'Seller id',
    sellerUpdated: 'Updated',
    sellerBalance: 'Balance of the seller',
    editSeller: 'Edit the seller',
    fieldSellerName: "Write the seller's name, in at most {chars} characters.",
    fieldSellerPhone: 'Enter a phone number: 8 digits, or + and the country code.',
    fieldSellerCommission: 'Enter a percentage from 0 to 100, with at most 2 decimals.',
  },
  fr: {
    newSeller: 'Nouveau vendeur',
    sellersIntro:
      'Les personnes ou boutiques pour qui vous vendez. Chaque vendeur a son propre solde, versé sur son téléphone ; l’entreprise garde sa commission sur ce que le vendeur vend.',
    noSellers: 'Aucun vendeur pour le moment.',
    noSellerMatches: "Aucun vendeur n'a ce statut.",
    sellerPhone: 'Téléphone (où vont ses versements)',
    sellerPhoneHint: '8 chiffres pour un numéro mauritanien ({example}), ou + et l’indicatif du pays.',
    sellerCommission: 'Commission (%)',
    sellerCommissionHint: 'Ce que l’entreprise garde de ce que vend le vendeur : de 0 à 100, avec 2 décimales au plus.',
    sellerCommissionShort: 'Commission',
    sellerStatusActive: 'Actif',
    sellerStatusDisabled: 'Désactivé',
    sellerStatusHint:
      'Un vendeur désactivé ne reçoit aucune nouvelle vente ; il garde son solde et peut toujours être payé.',
    sellerId: 'Identifiant du vendeur',
    sellerUpdated: 'Modifié',
    sellerBalance: 'Solde du vendeur',
    editSeller: 'Modifier le vendeur',
    fieldSellerName: 'Écrivez le nom du vendeur, en {chars} caractères au plus.',
    fieldSellerPhone: 'Saisissez un numéro : 8 chiffres, ou + et l’indicatif du pays.',
    fieldSellerCommission: 'Saisissez un pourcentage de 0 à 100, avec 2 décimales au plus.',
  },
  ar: {
    newSeller: 'بائع جديد',
    sellersIntro:
      'الأشخاص أو المحلات التي تبيع لحسابها. لكل بائع رصيده الخاص، يُحوَّل إلى هاتفه؛ وتحتفظ المؤسسة بعمولتها مما يبيعه البائع.',
    noSellers: 'لا يوجد بائعون بعد.',
    noSellerMatches: 'لا يوجد بائع بهذه الحالة.',
    sellerPhone: 'الهاتف (حيث تُحوَّل مدفوعاته)',
    sellerPhoneHint: '8 أرقام لرقم موريتاني ({example})، أو + ورمز البلد.',
    sellerCommission: 'العمولة (%)',
    sellerCommissionHint: 'ما تحتفظ به المؤسسة مما يبيعه البائع: من 0 إلى 100، بمنزلتين عشريتين على الأكثر.',
    sellerCommissionShort: 'العمولة',
    sellerStatusActive: 'نشط',
    sellerStatusDisabled: 'معطّل',
    sellerStatusHint: 'البائع المعطّل لا يتلقى أي بيع جديد؛ يحتفظ برصيده ويمكن دائمًا أن يُدفع له.',
    sellerId: 'معرّف البائع',
    sellerUpdated: 'آخر تعديل',
    sellerBalance: 'رصيد البائع',
    editSeller: 'تعديل البائع',
    fieldSellerName: 'اكتب اسم البائع، في {chars} حرف على الأكثر.',
    fieldSellerPhone: 'أدخل رقم هاتف: 8 أرقام، أو + ورمز البلد.',
    fieldSellerCommission: 'أدخل نسبة مئوية من 0 إلى 100، بمنزلتين عشريتين على الأكثر.',
  },
});
