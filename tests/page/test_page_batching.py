"""How `hayai page` cuts a page's crops into batches (app/page/read.py, `batches_of`)."""

from app.page.read import BATCH_SIZE, batches_of


def test_a_page_of_up_to_the_batch_size_is_one_batch():
    assert batches_of(list(range(15)), BATCH_SIZE) == [list(range(15))]
    assert batches_of(list(range(BATCH_SIZE)), BATCH_SIZE) == [list(range(BATCH_SIZE))]


def test_more_crops_are_cut_into_the_fewest_batches_of_even_sizes_in_order():
    order = [5, 3, 8, 1, 0, 2, 7, 4, 6, 9, 10, 12, 11, 13, 14, 15, 16]  # 17 crops
    batches = batches_of(order, 16)
    assert [len(b) for b in batches] == [9, 8]  # not 16 + 1
    assert [i for b in batches for i in b] == order  # every crop once, the order kept
    assert [len(b) for b in batches_of(list(range(33)), 8)] == [7, 7, 7, 6, 6]
    assert [len(b) for b in batches_of(list(range(5)), 1)] == [1] * 5


def test_no_crops_no_batches():
    assert batches_of([], BATCH_SIZE) == []
