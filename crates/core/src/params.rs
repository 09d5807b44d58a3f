//! What a URL's query parameters do, by their names: the one list the
//! fetcher (which drops tracking parameters) and the SEO reports (which name
//! the parameters that make duplicate URLs) share.

/// Query parameters that identify a campaign or a click, never the page.
const TRACKING_PARAMS: &[&str] = &[
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "fbclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "_ga",
    "_gl",
    "yclid",
    "igshid",
    "twclid",
    "ttclid",
    "li_fat_id",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "oly_anon_id",
    "oly_enc_id",
    "vero_id",
    "rb_clickid",
    "s_cid",
];

/// Parameters that carry a visitor's session.
const SESSION_PARAMS: &[&str] = &[
    "sid",
    "sessionid",
    "session_id",
    "session",
    "phpsessid",
    "jsessionid",
    "aspsessionid",
    "cfid",
    "cftoken",
    "zenid",
    "oscsid",
];

/// Parameters that sort, filter or lay out a listing.
const SORT_FILTER_PARAMS: &[&str] = &[
    "sort",
    "sortby",
    "sort_by",
    "order",
    "orderby",
    "order_by",
    "dir",
    "direction",
    "filter",
    "view",
    "display",
    "layout",
    "limit",
    "per_page",
    "perpage",
    "show",
    "mode",
];

/// Parameters that number the pages of a listing.
const PAGINATION_PARAMS: &[&str] = &["page", "p", "pg", "paged", "pagenum", "page_number", "start", "offset"];

/// What a query parameter is for, as far as its name tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamKind {
    /// Identifies a campaign or a click (`utm_*`, `gclid`...), never the page.
    Tracking,
    /// Carries a visitor's session (`sid`, `PHPSESSID`...).
    Session,
    /// Sorts, filters or lays out a listing (`sort`, `order`, `view`...).
    SortFilter,
    /// Numbers a listing's pages (`page`, `p`, `offset`...).
    Pagination,
    /// Anything else.
    Other,
}

impl ParamKind {
    /// The name reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamKind::Tracking => "tracking",
            ParamKind::Session => "session",
            ParamKind::SortFilter => "sort/filter",
            ParamKind::Pagination => "pagination",
            ParamKind::Other => "other",
        }
    }
}

/// The kind of the parameter `name` (any case; `filter[color]`-style names
/// count as their base name).
pub fn kind(name: &str) -> ParamKind {
    let lower = name.to_ascii_lowercase();
    let base = lower.split('[').next().unwrap_or(&lower);
    if base.starts_with("utm_") || TRACKING_PARAMS.contains(&base) {
        ParamKind::Tracking
    } else if SESSION_PARAMS.contains(&base) || base.starts_with("aspsessionid") {
        ParamKind::Session
    } else if SORT_FILTER_PARAMS.contains(&base) || base.starts_with("filter") || base.starts_with("sort") {
        ParamKind::SortFilter
    } else if PAGINATION_PARAMS.contains(&base) {
        ParamKind::Pagination
    } else {
        ParamKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_names_tell_their_kind() {
        assert_eq!(kind("utm_source"), ParamKind::Tracking);
        assert_eq!(kind("GCLID"), ParamKind::Tracking);
        assert_eq!(kind("PHPSESSID"), ParamKind::Session);
        assert_eq!(kind("ASPSESSIONIDQASDF"), ParamKind::Session);
        assert_eq!(kind("sort"), ParamKind::SortFilter);
        assert_eq!(kind("filter[color]"), ParamKind::SortFilter);
        assert_eq!(kind("page"), ParamKind::Pagination);
        assert_eq!(kind("id"), ParamKind::Other);
        assert_eq!(kind("pageid"), ParamKind::Other);
    }
}
