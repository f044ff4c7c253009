import type { Lang } from '../../../../lib/i18n.js';
import type { AuditAction } from '../../../audit/actions.js';

/**
 * Every audited act in words, in each language the dashboard speaks: the one table derived from
 * AUDIT_ACTIONS (a new action does not compile until it has its words here, and
 * test/audit/activity-page.test.ts checks each is written in every language).
 */
export const ACTION_WORDS: Record<AuditAction, Record<Lang, string>> = {
  'user.signed_in': { en: 'Signed in', fr: 'Connexion', ar: 'تسجيل الدخول' },
  'user.sign_in_failed': { en: 'Failed sign-in', fr: 'Échec de connexion', ar: 'محاولة دخول فاشلة' },
  'user.password_changed': { en: 'Password changed', fr: 'Mot de passe changé', ar: 'تغيير كلمة المرور' },
  'user.invited': { en: 'Member invited', fr: 'Membre invité', ar: 'دعوة عضو' },
  'user.invitation_revoked': { en: 'Invitation revoked', fr: 'Invitation annulée', ar: 'إلغاء دعوة' },
  'user.joined': { en: 'Member joined', fr: 'Membre arrivé', ar: 'انضمام عضو' },
  'user.role_changed': { en: 'Role changed', fr: 'Rôle changé', ar: 'تغيير الدور' },
  'user.removed': { en: 'Member removed', fr: 'Membre retiré', ar: 'إزالة عضو' },
  'api_key.created': { en: 'API key created', fr: 'Clé API créée', ar: 'إنشاء مفتاح API' },
  'api_key.rolled': { en: 'API key rolled', fr: 'Clé API renouvelée', ar: 'تجديد مفتاح API' },
  'api_key.revoked': { en: 'API key revoked', fr: 'Clé API révoquée', ar: 'إبطال مفتاح API' },
  'api_key.suspended': { en: 'API key suspended', fr: 'Clé API suspendue', ar: 'تعليق مفتاح API' },
  'webhook_endpoint.created': { en: 'Webhook endpoint created', fr: 'Point de webhook créé', ar: 'إنشاء نقطة webhook' },
  'webhook_endpoint.updated': {
    en: 'Webhook endpoint changed',
    fr: 'Point de webhook modifié',
    ar: 'تعديل نقطة webhook',
  },
  'webhook_endpoint.deleted': {
    en: 'Webhook endpoint deleted',
    fr: 'Point de webhook supprimé',
    ar: 'حذف نقطة webhook',
  },
  'webhook_endpoint.secret_rotated': {
    en: 'Webhook secret rotated',
    fr: 'Nouveau secret de webhook',
    ar: 'تجديد سر webhook',
  },
  'refund.created': { en: 'Refund', fr: 'Remboursement', ar: 'استرداد' },
  'payout.created': { en: 'Payout created', fr: 'Versement créé', ar: 'إنشاء تحويل' },
  'payout.cancelled': { en: 'Payout cancelled', fr: 'Versement annulé', ar: 'إلغاء تحويل' },
  'payout_batch.created': { en: 'Payout batch created', fr: 'Lot de versements créé', ar: 'إنشاء مجموعة تحويلات' },
  'seller.created': { en: 'Seller created', fr: 'Vendeur créé', ar: 'إنشاء بائع' },
  'seller.updated': { en: 'Seller changed', fr: 'Vendeur modifié', ar: 'تعديل بائع' },
  'payment_link.created': { en: 'Payment link created', fr: 'Lien de paiement créé', ar: 'إنشاء رابط دفع' },
  'payment_link.updated': { en: 'Payment link changed', fr: 'Lien de paiement modifié', ar: 'تعديل رابط دفع' },
  'settings.updated': { en: 'Settings changed', fr: 'Paramètres modifiés', ar: 'تعديل الإعدادات' },
  'shop_contact.updated': {
    en: 'Shop contact changed',
    fr: 'Contact de la boutique modifié',
    ar: 'تعديل بيانات اتصال المتجر',
  },
  'live_access.requested': { en: 'Live access requested', fr: 'Accès réel demandé', ar: 'طلب الوضع الفعلي' },
  'business.fees_changed': { en: 'Fees changed', fr: 'Frais modifiés', ar: 'تعديل الرسوم' },
  'business.live_approved': { en: 'Live access approved', fr: 'Accès réel approuvé', ar: 'الموافقة على الوضع الفعلي' },
  'business.live_revoked': { en: 'Live access revoked', fr: 'Accès réel retiré', ar: 'سحب الوضع الفعلي' },
  'business.suspended': { en: 'API suspended', fr: 'API suspendue', ar: 'إيقاف الواجهة البرمجية' },
  'business.reinstated': { en: 'API reinstated', fr: 'API rétablie', ar: 'إعادة تفعيل الواجهة البرمجية' },
};
