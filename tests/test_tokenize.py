

def test_the_language_is_told_from_function_words_or_not_at_all():
    from unitize.units.tokenize import guess_language

    english = ["The cat sat on the mat and it was happy with the sun in the window, as it is every day."] * 3
    german = ["Die Katze ist auf der Matte und sie ist nicht allein, denn der Hund ist auch im Haus mit dem Kind."] * 3
    turkish = ["Bu kitap çok güzel ve bir o kadar da uzun, ama daha sonra okumak için bir gün var mı değil mi."] * 3
    assert [guess_language(t) for t in (english, german, turkish)] == ["en", "de", "tr"]
    assert guess_language(["too short"]) is None  # fewer than 20 words
    assert guess_language(["Zażółć gęślą jaźń, powiedział szybko lis, który biegł przez las do domu swojej babci wieczorem."] * 3) is None
    assert guess_language(english + german) is None  # half and half: unknown
    assert guess_language(english * 3 + german[:1]) == "en"
