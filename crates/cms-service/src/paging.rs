//! Pages of results (SPEC.md: the pagination object): the bounds every list shares, decided
//! once here, and the arithmetic of a page.

use serde::Serialize;

use crate::error::{Error, Result};

/// The page a list shows when a request names none.
pub const DEFAULT_PAGE: i64 = 1;
/// The page size of a list when a request gives none.
pub const DEFAULT_PAGE_SIZE: i64 = 20;
/// The largest page.
pub const MAX_PAGE_SIZE: i64 = 100;
/// The most ids one by-ids request may name.
pub const MAX_BY_IDS: usize = 100;

/// A page of results with the pagination object of SPEC.md.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pagination {
    pub total: i64,
    pub page: i64,
    pub page_size: i64,
    pub total_pages: i64,
    pub has_next_page: bool,
    pub has_prev_page: bool,
}

impl Pagination {
    pub fn new(total: i64, page: i64, page_size: i64) -> Pagination {
        let total_pages = if total == 0 {
            0
        } else {
            (total + page_size - 1) / page_size
        };
        Pagination {
            total,
            page,
            page_size,
            total_pages,
            has_next_page: page < total_pages,
            has_prev_page: page > 1,
        }
    }
}

/// `page` and `pageSize` as a request gave them, the defaults in place of what it left out.
pub(crate) fn page_or_default(page: Option<i64>, page_size: Option<i64>) -> (i64, i64) {
    (
        page.unwrap_or(DEFAULT_PAGE),
        page_size.unwrap_or(DEFAULT_PAGE_SIZE),
    )
}

/// `limit` and `offset` as a request gave them, the defaults in place of what it left out: a
/// page of [`DEFAULT_PAGE_SIZE`] from the first item.
pub(crate) fn window_or_default(limit: Option<i64>, offset: Option<i64>) -> (i64, i64) {
    (limit.unwrap_or(DEFAULT_PAGE_SIZE), offset.unwrap_or(0))
}

/// `(limit, offset)` of a `page`/`pageSize` request, 400 when out of range.
pub(crate) fn page_window(page: i64, page_size: i64) -> Result<(i64, i64)> {
    if page < 1 || !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(Error::bad_request(format!(
            "page is 1 or more and pageSize is 1 to {MAX_PAGE_SIZE}"
        )));
    }
    page.checked_sub(1)
        .and_then(|p| p.checked_mul(page_size))
        .map(|offset| (page_size, offset))
        .ok_or_else(|| Error::bad_request("page is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pagination_arithmetic() {
        let p = Pagination::new(45, 2, 20);
        assert_eq!(
            (p.total_pages, p.has_next_page, p.has_prev_page),
            (3, true, true)
        );
        let p = Pagination::new(40, 2, 20);
        assert_eq!((p.total_pages, p.has_next_page), (2, false));
        let p = Pagination::new(0, 1, 20);
        assert_eq!(
            (p.total_pages, p.has_next_page, p.has_prev_page),
            (0, false, false)
        );
        let p = Pagination::new(5, 9, 20);
        assert_eq!(
            (p.total_pages, p.has_next_page, p.has_prev_page),
            (1, false, true)
        );
    }
}
